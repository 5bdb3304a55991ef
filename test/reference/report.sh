#!/bin/sh
# Prints the NetworkX agreement figures measured by the last pg_regress run of sql/networkx.sql
# (L1 distance between powerrank's and NetworkX's score vectors, and the bound each must meet).
# Usage: test/reference/report.sh [results_dir]   (default: results/ of the tree it lives in)
dir=${1:-$(dirname "$0")/../../results}
file="$dir/networkx_agreement.tsv"
if [ ! -f "$file" ]; then
	echo "report.sh: $file not found; run make installcheck (or test/run_all.sh) first" >&2
	exit 1
fi
printf '%-10s %-22s %-24s %s\n' graph result l1 bound
awk -F'\t' '{ printf "%-10s %-22s %-24s %s%s\n", $1, $2, $3, $4, ($3 + 0 <= $4 + 0 ? "" : "  FAIL") }' "$file"
