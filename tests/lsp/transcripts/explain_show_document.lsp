# "Explain" opens the rule's doc with window/showDocument when the client supports it; an unknown
# rule or command is an error, not a crash.
--- send
{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {"window": {"showDocument": {"support": true}}}}}
--- expect
{"id": 1, "result": {"capabilities": {"executeCommandProvider": {"commands": ["trainlint.explain"]}}}}
--- send
{"jsonrpc": "2.0", "method": "initialized", "params": {}}
--- send
{"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "trainlint.explain", "arguments": ["gc-collect-per-step"]}}
--- expect
{"method": "window/showDocument", "params": {"uri": "${SOURCE_URI:rules/docs/TL101-gc-collect-per-step.md}", "takeFocus": true}}
--- expect
{"id": 2, "result": {"code": "TL101", "uri": "${SOURCE_URI:rules/docs/TL101-gc-collect-per-step.md}", "doc": "~## Why is this bad?"}}
--- send
{"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand", "params": {"command": "trainlint.explain", "arguments": ["TL999"]}}
--- expect
{"id": 3, "error": {"code": -32602, "message": "~unknown rule TL999"}}
--- send
{"jsonrpc": "2.0", "id": 4, "method": "workspace/executeCommand", "params": {"command": "rm -rf", "arguments": []}}
--- expect
{"id": 4, "error": {"code": -32602}}
--- send
{"jsonrpc": "2.0", "id": 5, "method": "shutdown"}
--- expect
{"id": 5, "result": null}
--- send
{"jsonrpc": "2.0", "method": "exit"}
--- exit 0
