#!/usr/bin/env bash
# Test helper: an HTTPS origin on loopback whose certificate is signed by a CA made here,
# which no system store trusts. Writes DIR/ca.pem, serves DIR/files over TLS on PORT.
#   bash Tests/Helpers/tls-origin.sh DIR PORT
set -euo pipefail
dir=$1 port=$2
cd "$dir"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=Aspect test CA" \
  -keyout ca.key -out ca.pem 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout server.key -out server.csr 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' > san.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
  -extfile san.ext -out server.pem 2>/dev/null
exec python3 - "$port" <<'PY'
import http.server, ssl, sys, functools
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory="files")
server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain("server.pem", "server.key")
server.socket = context.wrap_socket(server.socket, server_side=True)
server.serve_forever()
PY
