# Functions of the Bash runner (docs/runner-protocol.md); its main loop is the command of
# BASH_RUNNER in src/languages/bash.ts, run as `bash -c`. User code runs in this same shell (eval in the main loop, not in
# a function, so `declare` and `local` behave as at top level) and may redefine almost anything;
# the runner calls builtins through `builtin` so user functions named printf or kill do not
# hijack it.

BASH_ARGV0=main.sh
# Inside a sandgate sandbox this shell is pid 2 under bubblewrap's init; anywhere else (a test
# run by hand) the end-of-call kill would hit the host's processes, so it is switched off.
__sg_sandboxed=0
if (($$ == 2)) && builtin read -r __sg_init </proc/1/comm && [[ $__sg_init == bwrap ]]; then __sg_sandboxed=1; fi
__sg_busy=0
__sg_id=
__sg_marker=
__sg_code=
__sg_keep=0

# Descriptors above 4 were leaked to us by whatever started the host; user code must not reach them.
for __sg_f in /proc/$$/fd/*; do
  __sg_n=${__sg_f##*/}
  if ((__sg_n > 4)); then exec {__sg_n}>&-; fi
done
# Private copies of stdout and stderr: the end-of-output marker must reach the host even when
# user code redirects or closes fds 1 and 2 for the rest of the session.
exec {__sg_out}>&1 {__sg_err}>&2 {__sg_frames}>&4
# The tool pipe (two FIFOs the host binds in) held open on high fds, named in SANDGATE_TOOL_FDS
# ("<replies> <requests>"); sandgate-tool opens the FIFOs by path itself, and uses these only without them.
if [[ -p /sandgate/channel/tool-replies && -p /sandgate/channel/tool-requests ]]; then
  exec {__sg_n}</sandgate/channel/tool-replies {__sg_f}>/sandgate/channel/tool-requests
  export SANDGATE_TOOL_FDS="$__sg_n $__sg_f"
fi
unset __sg_f __sg_n

# Sends one frame to the host (a copy of fd 4, which user code runs without): 4-byte big-endian length, then ASCII JSON.
__sg_send() {
  local n=${#1} hdr
  builtin printf -v hdr '\\x%02x\\x%02x\\x%02x\\x%02x' $((n >> 24 & 255)) $((n >> 16 & 255)) $((n >> 8 & 255)) $((n & 255))
  builtin printf "$hdr%s" "$1" >&"$__sg_frames"
}

# Reads one request from fd 3: a header line `<id> <marker> <n> <keep>`, n NUL-terminated `NAME=value`
# environment variables for the call, then the code, NUL-terminated.
__sg_next() {
  local __sg_n=0 __sg_item __sg_vars=()
  IFS=' ' builtin read -r -u 3 __sg_id __sg_marker __sg_n __sg_keep || return 1
  while ((__sg_n-- > 0)); do
    IFS= builtin read -r -d '' -u 3 __sg_item || return 1
    __sg_vars+=("$__sg_item")
  done
  IFS= builtin read -r -d '' -u 3 __sg_code || return 1
  __sg_env_set "${__sg_vars[@]}"
  return 0
}

# The call's environment variables: exported for the call, each one's earlier state kept as
# (name, u|x|s, value): unset, exported, or set but not exported; __sg_env_restore puts it back.
__sg_env_saved=()
__sg_env_set() {
  local __sg_item __sg_name
  __sg_env_saved=()
  for __sg_item in "$@"; do
    __sg_name=${__sg_item%%=*}
    if [[ ! -v $__sg_name ]]; then __sg_env_saved+=("$__sg_name" u "")
    elif [[ ${!__sg_name@a} == *x* ]]; then __sg_env_saved+=("$__sg_name" x "${!__sg_name}")
    else __sg_env_saved+=("$__sg_name" s "${!__sg_name}"); fi
    builtin export "$__sg_item" 2>/dev/null
  done
}
__sg_env_restore() {
  local __sg_i __sg_name
  for ((__sg_i = 0; __sg_i < ${#__sg_env_saved[@]}; __sg_i += 3)); do
    __sg_name=${__sg_env_saved[__sg_i]}
    case ${__sg_env_saved[__sg_i + 1]} in
      u) builtin unset -v "$__sg_name" ;;
      x) builtin export "$__sg_name=${__sg_env_saved[__sg_i + 2]}" ;;
      *) builtin export -n "$__sg_name" && builtin printf -v "$__sg_name" '%s' "${__sg_env_saved[__sg_i + 2]}" ;;
    esac 2>/dev/null
  done
  __sg_env_saved=()
}

# Ends a call: stop everything user code started, mark the end of output, send the result.
# Processes calls asked to keep (keep_processes), pid -> start time: later calls' cleanup spares
# them and their descendants; they end with the sandbox.
declare -A __sg_kept=()

# The live processes of the sandbox but pid 1 and this shell, in __sg_ps_pid, __sg_ps_ppid, __sg_ps_start.
__sg_ps() {
  local - __sg_p __sg_s __sg_f
  builtin set +f
  __sg_ps_pid=() __sg_ps_ppid=() __sg_ps_start=()
  for __sg_p in /proc/[0-9]*; do
    __sg_p=${__sg_p#/proc/}
    ((__sg_p == 1 || __sg_p == $$)) && continue
    { IFS= builtin read -r __sg_s <"/proc/$__sg_p/stat"; } 2>/dev/null || continue
    __sg_s=${__sg_s##*") "}
    IFS=' ' builtin read -r -a __sg_f <<<"$__sg_s"
    [[ ${__sg_f[0]} == [ZXx] ]] && continue
    __sg_ps_pid+=("$__sg_p") __sg_ps_ppid+=("${__sg_f[1]}") __sg_ps_start+=("${__sg_f[19]}")
  done
}

__sg_keep_survivors() {
  local __sg_i
  __sg_ps
  for __sg_i in "${!__sg_ps_pid[@]}"; do __sg_kept[${__sg_ps_pid[__sg_i]}]=${__sg_ps_start[__sg_i]}; done
}

# Kills every process but the kept ones (still the same process: pid and start time) and their descendants.
__sg_kill_unkept() {
  local -A __sg_spare=()
  local __sg_i __sg_pid __sg_n __sg_changed __sg_tries=0
  while ((__sg_tries++ < 50)); do
    __sg_ps
    __sg_spare=()
    for __sg_i in "${!__sg_ps_pid[@]}"; do
      __sg_pid=${__sg_ps_pid[__sg_i]}
      [[ ${__sg_kept[$__sg_pid]-} == "${__sg_ps_start[__sg_i]}" ]] && __sg_spare[$__sg_pid]=1
    done
    __sg_changed=1
    while ((__sg_changed)); do
      __sg_changed=0
      for __sg_i in "${!__sg_ps_pid[@]}"; do
        if [[ -z ${__sg_spare[${__sg_ps_pid[__sg_i]}]-} && -n ${__sg_spare[${__sg_ps_ppid[__sg_i]}]-} ]]; then
          __sg_spare[${__sg_ps_pid[__sg_i]}]=1 __sg_changed=1
        fi
      done
    done
    __sg_n=0
    for __sg_i in "${!__sg_ps_pid[@]}"; do
      [[ -n ${__sg_spare[${__sg_ps_pid[__sg_i]}]-} ]] && continue
      builtin kill -9 "${__sg_ps_pid[__sg_i]}" 2>/dev/null
      ((++__sg_n))
    done
    ((__sg_n == 0)) && break
  done
  for __sg_pid in "${!__sg_kept[@]}"; do
    [[ -n ${__sg_spare[$__sg_pid]-} ]] || builtin unset "__sg_kept[$__sg_pid]"
  done
}

__sg_done() {
  # Before any local: a variable of the call named like one (rc, ok) must be restored, not the local.
  __sg_env_restore
  local rc=$1 reset=${2:-false} ok=false tries=0
  ((rc == 0)) && ok=true
  builtin disown -a 2>/dev/null
  # kill(-1) reaches every process in the sandbox's pid namespace except pid 1 and this shell;
  # only ever inside one (see __sg_sandboxed), never on a host by accident.
  if ((__sg_sandboxed)); then
    if [[ $__sg_keep == 1 ]]; then
      __sg_keep_survivors
    elif ((${#__sg_kept[@]})); then
      __sg_kill_unkept
    else
      while builtin kill -9 -1 2>/dev/null && ((++tries < 50)); do :; done
    fi
  fi
  builtin printf '%s' "$__sg_marker" >&"$__sg_out"
  builtin printf '%s' "$__sg_marker" >&"$__sg_err"
  local error=
  ((rc != 0)) && error=",\"error\":{\"type\":\"ExitStatus\",\"message\":\"command exited with status $rc\",\"traceback\":\"\"}"
  __sg_send "{\"type\":\"result\",\"id\":\"$__sg_id\",\"ok\":$ok,\"exitCode\":$rc$error,\"resetState\":$reset}"
  __sg_busy=0
}

# sandgate-show FILE [MIME]: returns an image file to the agent besides the call's output (an
# `image` frame; the host checks its type and size). The type comes from the extension unless given.
sandgate-show() {
  if (($# < 1 || $# > 2)); then
    builtin printf 'usage: sandgate-show FILE [MIME]  (PNG, JPEG, GIF, WebP or SVG)\n' >&2
    return 2
  fi
  local file=$1 mime=${2-} size data
  if [[ -z $mime ]]; then
    case ${file,,} in
      *.png) mime=image/png ;;
      *.jpg | *.jpeg) mime=image/jpeg ;;
      *.gif) mime=image/gif ;;
      *.webp) mime=image/webp ;;
      *.svg) mime=image/svg+xml ;;
      *) builtin printf 'sandgate-show: cannot tell the image type of %s; name it: sandgate-show FILE image/png\n' "$file" >&2; return 2 ;;
    esac
  elif [[ ! $mime =~ ^image/[a-z0-9.+-]+$ ]]; then
    builtin printf 'sandgate-show: %s is not an image type like image/png\n' "$mime" >&2
    return 2
  fi
  if [[ ! -f $file || ! -r $file ]]; then
    builtin printf 'sandgate-show: %s is not a readable file\n' "$file" >&2
    return 1
  fi
  size=$(/usr/bin/stat -L -c %s -- "$file") || return 1
  # Over what one frame can carry: only named, so the host can say it was dropped.
  if ((size > 12582912)); then
    __sg_send "{\"type\":\"image\",\"id\":\"$__sg_id\",\"mime\":\"$mime\",\"size\":$size}"
    return 0
  fi
  data=$(/usr/bin/base64 -w0 -- "$file") || return 1
  __sg_send "{\"type\":\"image\",\"id\":\"$__sg_id\",\"mime\":\"$mime\",\"data\":\"$data\"}"
}

# curl and wget in the session's shell: a host they cannot resolve or reach (curl 6 and 7, wget 4)
# gets one line saying why, as pip and imports say it; a refused connection on loopback does not.
__sg_no_network() {
  local status=$1 arg
  shift
  for arg; do
    [[ $arg == *localhost* || $arg == *127.0.0.1* || $arg == *'[::1]'* ]] && return "$status"
  done
  builtin printf '%s\n' "sandgate: no network in this sandbox: only loopback (127.0.0.1) is reachable; work on files in /workspace (uploaded, or written with file_write) or call the configured MCP servers' tools (sandgate-tool)" >&2
  return "$status"
}
curl() {
  command curl "$@" || {
    local status=$?
    if ((status == 6 || status == 7)); then __sg_no_network "$status" "$@"; else return "$status"; fi
  }
}
wget() {
  command wget "$@" || {
    local status=$?
    if ((status == 4)); then __sg_no_network "$status" "$@"; else return "$status"; fi
  }
}

# `exit`, or a failure under `set -e`, ends this shell: report the call before going.
__sg_on_exit() {
  local rc=$?
  if ((__sg_busy)); then __sg_done "$rc" true; fi
}
builtin trap __sg_on_exit EXIT

__sg_send "{\"type\":\"ready\",\"language\":\"bash\",\"pid\":$$}"
