# Shared by the dashboard cases (sourced): arguments, a work directory, and
# waiting for a URL to answer.
#   case_setup BUILD_DIR ARTIFACT_DIR PORT  -> build, artifacts, port, here, work
case_setup() {
  build=$1
  artifacts=$2
  port=$3
  here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
  mkdir -p "$artifacts"
  work=$(mktemp -d)
  unset GPUWATCH_FAKE_TIME
}

# Waits up to 20 s for URL to answer 2xx.
wait_for() {
  for _ in $(seq 1 100); do
    curl -sf "$1" >/dev/null && return 0
    sleep 0.2
  done
  return 1
}
