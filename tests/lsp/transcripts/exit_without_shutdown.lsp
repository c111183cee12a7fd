# `exit` without `shutdown` ends the server with status 1, as the spec says.
--- send
{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
--- expect
{"id": 1, "result": {"capabilities": {}}}
--- send
{"jsonrpc": "2.0", "method": "exit"}
--- exit 1
