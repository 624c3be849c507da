# Shared by the bench scripts; source it.

# time_of URL: the seconds one request took; it must answer 200 (a bench of errors
# measures nothing), else the script stops.
time_of() {
  local r; r=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' "$1")
  [ "${r% *}" = 200 ] || { echo "$1 answered ${r% *}" >&2; exit 1; }
  echo "${r#* }"
}
