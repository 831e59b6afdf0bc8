# Throwaway services for Copytrace's tests, sourced by scripts/test and scripts/with-services.
#
# start_redis and start_postgres start a redis-server and a PostgreSQL cluster on free loopback
# ports in one temporary directory, export their URLs (COPYTRACE_TEST_REDIS_URL,
# COPYTRACE_TEST_POSTGRES_URL) and, for tests that run servers of their own (fault tests that
# restart PostgreSQL), where the server binaries are and which user runs them
# (COPYTRACE_TEST_PG_BIN, COPYTRACE_TEST_PG_USER). An EXIT trap stops everything and deletes the
# directory, whatever way the calling script ends.

# Everything started below is stopped here, whatever way the script ends.
service_dir=""
redis_pid=""
cluster_pidfiles=()
pg_data=""
cleanup() {
    local pidfile
    for pidfile in "${cluster_pidfiles[@]}"; do
        if [[ -s "$pidfile" ]]; then
            kill "$(cat "$pidfile")" 2>/dev/null || true
        fi
    done
    if [[ -n "$redis_pid" ]]; then
        kill "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
    fi
    if [[ -n "$pg_data" ]]; then
        as_pg_user "$pg_bin/pg_ctl" stop -D "$pg_data" -m immediate -s >/dev/null 2>&1 || true
    fi
    if [[ -n "$service_dir" ]]; then
        rm -rf "$service_dir"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# One temporary directory for every service's data, sockets and logs.
make_service_dir() {
    if [[ -z "$service_dir" ]]; then
        service_dir=$(mktemp -d "${TMPDIR:-/tmp}/copytrace-test.XXXXXX")
        chmod 755 "$service_dir"
    fi
}

# Installs Debian packages with apt-get (through sudo when not root). `what` names them in the
# error when neither root nor sudo is available; any failure stops the script.
apt_install() {
    local what=$1
    shift
    echo "$what not found: installing $* with apt-get"
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        if ! command -v sudo >/dev/null; then
            echo "error: $what is missing and installing it needs root or sudo" >&2
            exit 1
        fi
        sudo=(sudo)
    fi
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# The `openssl` command: the trusted-timestamp tests run a real RFC 3161 time-stamping
# authority with `openssl ts -reply` (and make its certificates with `openssl req`/`x509`).
# Installs Debian's openssl when it is missing; the tests fail, never skip, without it.
require_openssl() {
    if ! command -v openssl >/dev/null || ! openssl ts -help >/dev/null 2>&1; then
        apt_install "The openssl command" openssl
    fi
    if ! openssl ts -help >/dev/null 2>&1; then
        echo "error: no working \`openssl ts\` after installing openssl" >&2
        exit 1
    fi
}

# A throwaway redis-server on a free loopback port, with no persistence, in a temporary
# directory; its URL is exported as COPYTRACE_TEST_REDIS_URL. Installs redis-server (which also
# brings redis-benchmark) from Debian's packages when it is missing. Any failure stops the
# script: the Redis tests fail rather than skip without a server.
start_redis() {
    if ! command -v redis-server >/dev/null; then
        apt_install redis-server redis-server
    fi
    make_service_dir
    local port attempt
    # A random high port; if another process holds it, redis-server exits and the next is tried.
    for attempt in 1 2 3 4 5 6 7 8; do
        port=$(( 20000 + RANDOM % 40000 ))
        redis-server --bind 127.0.0.1 --port "$port" --dir "$service_dir" --save "" \
            --appendonly no --daemonize no --logfile "$service_dir/redis.log" &
        redis_pid=$!
        for _ in $(seq 1 100); do
            if redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; then
                export COPYTRACE_TEST_REDIS_URL="redis://127.0.0.1:$port/0"
                echo "redis-server on 127.0.0.1:$port (pid $redis_pid, attempt $attempt)"
                return
            fi
            if ! kill -0 "$redis_pid" 2>/dev/null; then
                break
            fi
            sleep 0.1
        done
        kill "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
        redis_pid=""
    done
    echo "error: redis-server did not start (last port tried: $port); its log:" >&2
    cat "$service_dir/redis.log" >&2 || true
    exit 1
}

# Starts a Redis Cluster of three masters (no replicas) on free loopback ports and exports
# COPYTRACE_TEST_REDIS_CLUSTER_URL (the three node URLs, comma-separated, as `--redis-url` takes
# them) and, for tests that stop and restart a node, COPYTRACE_TEST_REDIS_CLUSTER_NODES: one
# `port:directory` per node, each directory holding the node's redis.conf, nodes.conf and
# append-only file; a node stopped and restarted as `redis-server DIR/redis.conf` rejoins with
# its slots and its data. Every node is stopped on exit, restarted
# ones included (they write the same pid file).
start_redis_cluster() {
    if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
        apt_install redis-server redis-server
    fi
    make_service_dir
    local attempt base port dir ports=() nodes=() urls=()
    for attempt in 1 2 3 4 5 6 7 8; do
        base=$(( 20000 + RANDOM % 40000 ))
        ports=("$base" "$(( base + 1 ))" "$(( base + 2 ))")
        nodes=()
        urls=()
        local ok=1
        for port in "${ports[@]}"; do
            dir="$service_dir/cluster-$port"
            mkdir -p "$dir"
            cat >"$dir/redis.conf" <<CONF
bind 127.0.0.1
port $port
dir $dir
daemonize yes
pidfile $dir/redis.pid
logfile $dir/redis.log
save ""
appendonly yes
appendfsync always
cluster-enabled yes
cluster-config-file $dir/nodes.conf
cluster-node-timeout 1000
CONF
            cluster_pidfiles+=("$dir/redis.pid")
            if ! redis-server "$dir/redis.conf" >/dev/null 2>&1; then
                ok=0
            fi
            nodes+=("$port:$dir")
            urls+=("redis://127.0.0.1:$port")
        done
        for port in "${ports[@]}"; do
            for _ in $(seq 1 50); do
                redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break
                sleep 0.1
            done
            redis-cli -p "$port" ping 2>/dev/null | grep -q PONG || ok=0
        done
        if [[ $ok == 1 ]] && redis-cli --cluster create "127.0.0.1:${ports[0]}" \
            "127.0.0.1:${ports[1]}" "127.0.0.1:${ports[2]}" --cluster-replicas 0 \
            --cluster-yes >"$service_dir/cluster-create.log" 2>&1; then
            for _ in $(seq 1 100); do
                local healthy=0
                for port in "${ports[@]}"; do
                    redis-cli -p "$port" cluster info 2>/dev/null | grep -q 'cluster_state:ok' \
                        && healthy=$(( healthy + 1 ))
                done
                if [[ $healthy == 3 ]]; then
                    COPYTRACE_TEST_REDIS_CLUSTER_URL=$(IFS=,; echo "${urls[*]}")
                    COPYTRACE_TEST_REDIS_CLUSTER_NODES=$(IFS=,; echo "${nodes[*]}")
                    export COPYTRACE_TEST_REDIS_CLUSTER_URL COPYTRACE_TEST_REDIS_CLUSTER_NODES
                    echo "Redis Cluster of 3 masters on 127.0.0.1:${ports[0]}-${ports[2]} (attempt $attempt)"
                    return
                fi
                sleep 0.1
            done
        fi
        for port in "${ports[@]}"; do
            redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
        done
    done
    echo "error: the Redis Cluster did not start; its logs:" >&2
    cat "$service_dir"/cluster-create.log "$service_dir"/cluster-*/redis.log >&2 || true
    exit 1
}

# PostgreSQL refuses to run as root, so under root (as in CI) the cluster runs as an
# unprivileged system user: `postgres` when the Debian package created it, else `copytrace-pg`,
# created here. Other users run it as themselves.
pg_bin=""
pg_user=""
as_pg_user() {
    if [[ -n "$pg_user" ]]; then
        # From a directory the user may enter, so the server does not warn about the cwd.
        (cd / && runuser -u "$pg_user" -- "$@")
    else
        "$@"
    fi
}

# The directory holding initdb, pg_ctl and postgres: from PATH (or /usr/local/bin), else the
# newest /usr/lib/postgresql/*/bin of Debian's packages, installed with apt-get when missing.
find_pg_bin() {
    local initdb_path dir
    initdb_path=$(command -v initdb || true)
    if [[ -z "$initdb_path" && -x /usr/local/bin/initdb ]]; then
        initdb_path=/usr/local/bin/initdb
    fi
    if [[ -n "$initdb_path" ]]; then
        dir=$(dirname "$(readlink -f "$initdb_path")")
    else
        dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    fi
    if [[ -n "$dir" && -x "$dir/initdb" && -x "$dir/pg_ctl" && -x "$dir/postgres" ]]; then
        pg_bin=$dir
        return 0
    fi
    return 1
}

# A throwaway PostgreSQL cluster: initdb into a temporary directory, listening on 127.0.0.1
# only, on a free port, trust authentication for the test user `copytrace` (the only user; it
# is a superuser so the tests can create and drop a database each). Durability is switched off
# (fsync, synchronous commit, full-page writes): the cluster is deleted on exit and the tests
# create a hundred databases. Its URL is exported as COPYTRACE_TEST_POSTGRES_URL. Any failure
# stops the script: the PostgreSQL tests fail rather than skip without a server.
start_postgres() {
    if ! find_pg_bin; then
        apt_install "PostgreSQL server binaries" postgresql
        # The package starts a cluster of its own on port 5432; the tests never use it.
        find_pg_bin || { echo "error: no initdb after installing postgresql" >&2; exit 1; }
    fi
    make_service_dir
    if [[ $(id -u) -eq 0 ]]; then
        if id postgres >/dev/null 2>&1; then
            pg_user=postgres
        else
            pg_user=copytrace-pg
            id "$pg_user" >/dev/null 2>&1 || useradd --system --no-create-home \
                --shell /usr/sbin/nologin "$pg_user"
        fi
    fi
    local dir="$service_dir/postgres"
    mkdir -p "$dir"
    if [[ -n "$pg_user" ]]; then
        chown "$pg_user" "$dir"
    fi
    # ICU is needed by the contract tests' databases (ICU en-US default collation).
    as_pg_user "$pg_bin/initdb" -D "$dir/data" -U copytrace --auth=trust --encoding=UTF8 \
        --locale=C.UTF-8 --no-sync >"$service_dir/initdb.log" 2>&1 || {
        echo "error: initdb failed; its log:" >&2
        cat "$service_dir/initdb.log" >&2
        exit 1
    }
    local port attempt
    for attempt in 1 2 3 4 5 6 7 8; do
        port=$(( 20000 + RANDOM % 40000 ))
        if as_pg_user "$pg_bin/pg_ctl" start -D "$dir/data" -w -t 60 -l "$dir/postgres.log" \
            -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir \
                -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
                -c max_connections=200" >/dev/null; then
            pg_data="$dir/data"
            export COPYTRACE_TEST_POSTGRES_URL="postgres://copytrace@127.0.0.1:$port/postgres"
            export COPYTRACE_TEST_PG_BIN="$pg_bin" COPYTRACE_TEST_PG_USER="$pg_user"
            echo "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on" \
                "127.0.0.1:$port (data in $dir/data, attempt $attempt)"
            return
        fi
        # Most likely the port was taken: the server exits and the next port is tried.
        as_pg_user "$pg_bin/pg_ctl" stop -D "$dir/data" -m immediate -s >/dev/null 2>&1 || true
    done
    echo "error: PostgreSQL did not start (last port tried: $port); its log:" >&2
    cat "$dir/postgres.log" >&2 || true
    exit 1
}

# Python's openpyxl, the standard reader the XLSX export tests open their workbooks with.
# Exports COPYTRACE_TEST_PYTHON, a python3 that imports it: the first python3 on PATH when it
# can, else Debian's /usr/bin/python3 (a python3 of pyenv or a virtualenv on PATH does not see
# Debian's packages). Installs python3-openpyxl with apt-get when neither can (with sudo when
# not root); any failure stops the script, so those tests fail rather than skip.
require_openpyxl() {
    local python
    for python in python3 /usr/bin/python3; do
        if "$python" -c 'import openpyxl' 2>/dev/null; then
            export COPYTRACE_TEST_PYTHON="$python"
            return
        fi
    done
    apt_install python3-openpyxl python3-openpyxl
    if ! /usr/bin/python3 -c 'import openpyxl'; then
        echo "error: python3-openpyxl was installed but /usr/bin/python3 cannot import it" >&2
        exit 1
    fi
    export COPYTRACE_TEST_PYTHON=/usr/bin/python3
}

# Headless Chromium for the screenshot and browser tests (copytrace-browser, `copytrace
# evidence`, the admin web's tests/browser.rs): Debian's `chromium`, installed with apt-get when
# no Chromium or Chrome is on PATH (with sudo when not root), and a CJK font (Debian's
# `fonts-noto-cjk`) when fontconfig knows none, so Chinese pages render as glyphs rather than
# boxes in screenshots. Nothing is started here: each test launches and kills its own browser.
# Its path is exported as COPYTRACE_CHROMIUM. Any failure stops the script: the screenshot tests
# fail rather than skip without a browser.
ensure_chromium() {
    local found="" name
    for name in chromium chromium-browser google-chrome-stable google-chrome; do
        if command -v "$name" >/dev/null; then
            found=$(command -v "$name")
            break
        fi
    done
    if [[ -z "$found" ]]; then
        apt_install Chromium chromium
        found=$(command -v chromium || true)
        if [[ -z "$found" ]]; then
            echo "error: no chromium on PATH after installing it" >&2
            exit 1
        fi
    fi
    if ! fc-list :lang=zh 2>/dev/null | grep -q .; then
        apt_install "A Chinese (CJK) font" fonts-noto-cjk
        if ! fc-list :lang=zh | grep -q .; then
            echo "error: fontconfig knows no Chinese font after installing fonts-noto-cjk" >&2
            exit 1
        fi
    fi
    export COPYTRACE_CHROMIUM="$found"
    echo "Chromium: $found ($("$found" --version 2>/dev/null || echo "version unknown"))"
}
