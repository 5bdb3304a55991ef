# bench/multi/nccl_env.sh — sourced by bench/multi/run.sh and bench/sql/multi.sh: finds NCCL and
# exports NCCL_HOME (kept when set; else the Python package nvidia-nccl-cu13, which carries nccl.h and
# libnccl.so.2, when a python3 has it; else the CUDA toolkit when it holds nccl.h; else empty) and puts
# NCCL's library folder on LD_LIBRARY_PATH.  NCCL's own settings (NCCL_*) are left to the environment.
NCCL_HOME=${NCCL_HOME:-}
if [ -z "$NCCL_HOME" ]; then
  for py in python3 /usr/bin/python3; do
    d=$($py -c "import nvidia.nccl as m; print(list(m.__path__)[0])" 2>/dev/null) && [ -f "$d/include/nccl.h" ] && { NCCL_HOME=$d; break; }
  done
fi
cuda=${CUDA_HOME:-/usr/local/cuda}
if [ -z "$NCCL_HOME" ] && [ -f "$cuda/include/nccl.h" ]; then NCCL_HOME=$cuda; fi
export NCCL_HOME
if [ -n "$NCCL_HOME" ]; then export LD_LIBRARY_PATH=$NCCL_HOME/lib:$NCCL_HOME/lib64:${LD_LIBRARY_PATH:-}; fi
