#include "analyzer/lsp/transport.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>

namespace tl::lsp {

namespace {
std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}
}  // namespace

bool Transport::fill() {
  if (pos_ > 0 && pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  } else if (pos_ > (1u << 20)) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  char tmp[65536];
  for (;;) {
    ssize_t n = ::read(in_, tmp, sizeof tmp);
    if (n > 0) {
      buf_.append(tmp, static_cast<size_t>(n));
      return true;
    }
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

bool Transport::read_line(std::string& line) {
  for (;;) {
    size_t nl = buf_.find('\n', pos_);
    if (nl != std::string::npos) {
      line.assign(buf_, pos_, nl - pos_);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      pos_ = nl + 1;
      return true;
    }
    // a header line longer than 64 KiB is garbage: drop it in pieces
    if (buf_.size() - pos_ > (64u << 10)) pos_ = buf_.size();
    if (!fill()) return false;
  }
}

bool Transport::read_exact(size_t n, std::string& out) {
  while (buf_.size() - pos_ < n)
    if (!fill()) return false;
  out.assign(buf_, pos_, n);
  pos_ += n;
  return true;
}

ReadResult Transport::read() {
  ReadResult r;
  // header block: lines up to an empty line
  long long length = -1;
  bool bad_length = false, any_header = false;
  std::string line;
  for (;;) {
    if (!read_line(line)) return r;  // Eof
    if (line.empty()) {
      if (!any_header) continue;  // stray blank lines between messages
      break;
    }
    any_header = true;
    // After a body shorter than its Content-Length said, the rest of it runs into the next
    // header: start the header where `Content-Length:` is.
    if (size_t cl = lower(line).find("content-length:"); cl != std::string::npos && cl > 0) line.erase(0, cl);
    size_t colon = line.find(':');
    if (colon == std::string::npos) {
      bad_length = true;
      continue;
    }
    std::string name = lower(trim(line.substr(0, colon)));
    std::string value = trim(line.substr(colon + 1));
    if (name == "content-length") {
      long long v = -1;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || p != value.data() + value.size() || v < 0) bad_length = true;
      else length = v;
    }
  }
  if (length > 0 && static_cast<unsigned long long>(length) > max_body_) bad_length = true;  // not waited for, not kept
  if (length < 0 || bad_length) {
    r.kind = ReadResult::Kind::BadHeader;
    r.error = length < 0 && !bad_length ? "missing Content-Length header"
              : length > 0 && static_cast<unsigned long long>(length) > max_body_
                  ? "Content-Length " + std::to_string(length) + " is over the limit of " + std::to_string(max_body_) + " bytes"
                  : "invalid Content-Length header";
    // Without a length the body cannot be skipped reliably: resynchronise on the next
    // `Content-Length:` in what has been read, dropping what comes before it.
    std::string rest = lower(buf_.substr(pos_));
    size_t next = rest.find("content-length:");
    pos_ = next == std::string::npos ? buf_.size() : pos_ + next;
    return r;
  }
  std::string body;
  if (!read_exact(static_cast<size_t>(length), body)) return r;
  r.message = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (r.message.is_discarded()) {
    r.kind = ReadResult::Kind::ParseError;
    r.error = "the message body is not valid JSON";
    r.message = nullptr;
    return r;
  }
  r.kind = ReadResult::Kind::Message;
  return r;
}

bool Transport::write(const nlohmann::json& message) {
  std::string body = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  std::lock_guard lock(write_mu_);
  size_t off = 0;
  while (off < out.size()) {
    ssize_t n = ::write(out_, out.data() + off, out.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace tl::lsp
