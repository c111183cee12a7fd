// The LSP transport: JSON-RPC messages framed with `Content-Length` headers over two file
// descriptors (stdin/stdout for `trainlint lsp`, pipes in tests). It knows nothing of LSP methods.
//
// Reading is robust to what a broken client may send: a header block without Content-Length, a
// length that is not a number or is absurdly large, a body that is not JSON. Each is reported as a
// value (ReadResult::Kind) so that the server can answer with a JSON-RPC error and go on; only the
// end of the input ends the loop.
#pragma once
#include <cstddef>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

namespace tl::lsp {

struct ReadResult {
  enum class Kind {
    Message,     // `message` holds the parsed JSON body
    Eof,         // the input ended (or a read failed): the server stops
    BadHeader,   // a header block without a valid Content-Length; its body (if any) was skipped
    ParseError,  // a framed body that is not valid JSON (`error` says why)
  } kind = Kind::Eof;
  nlohmann::json message;
  std::string error;
};

class Transport {
 public:
  // The transport does not own the descriptors.
  Transport(int in_fd, int out_fd, size_t max_body = 256u << 20) : in_(in_fd), out_(out_fd), max_body_(max_body) {}

  // Blocks until one message (or a framing problem, or the end) is read. Call from one thread.
  ReadResult read();
  // Frames and writes one message; safe to call from several threads. False when the output is gone.
  bool write(const nlohmann::json& message);

 private:
  bool fill();                          // reads more bytes into buf_; false at EOF/error
  bool read_line(std::string& line);    // one header line without CRLF/LF
  bool read_exact(size_t n, std::string& out);

  int in_, out_;
  size_t max_body_;
  std::string buf_;
  size_t pos_ = 0;
  std::mutex write_mu_;
};

}  // namespace tl::lsp
