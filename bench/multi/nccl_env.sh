# bench/multi/nccl_env.sh — sourced by the device scripts: finds NCCL and exports NCCL_HOME (the pip package
# nvidia-nccl-cu13 on the lent machines first, then the CUDA toolkit), turns NVLink multicast off
# (NCCL_NVLS_ENABLE=0: the lent machines require it, and the library leaves it to the environment) and
# puts NCCL's library folder on LD_LIBRARY_PATH.
NCCL_HOME=${NCCL_HOME:-}
if [ -z "$NCCL_HOME" ]; then
  for py in python3 /usr/bin/python3; do
    d=$($py -c "import nvidia.nccl as m; print(list(m.__path__)[0])" 2>/dev/null) && [ -f "$d/include/nccl.h" ] && { NCCL_HOME=$d; break; }
  done
fi
[ -z "$NCCL_HOME" ] && [ -f /usr/local/cuda/include/nccl.h ] && NCCL_HOME=/usr/local/cuda
export NCCL_HOME NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$NCCL_HOME/lib:$NCCL_HOME/lib64:${LD_LIBRARY_PATH:-}
