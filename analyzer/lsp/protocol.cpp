#include "analyzer/lsp/protocol.h"

#include <algorithm>
#include <cctype>

namespace tl::lsp {

std::string_view encoding_name(Encoding e) {
  switch (e) {
    case Encoding::Utf8: return "utf-8";
    case Encoding::Utf32: return "utf-32";
    default: return "utf-16";
  }
}
std::optional<Encoding> parse_encoding(std::string_view s) {
  if (s == "utf-8") return Encoding::Utf8;
  if (s == "utf-16") return Encoding::Utf16;
  if (s == "utf-32") return Encoding::Utf32;
  return std::nullopt;
}

namespace {
// Length of the UTF-8 sequence starting with byte `c` (1 for a stray or invalid byte).
uint32_t seq_len(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) return 2;
  if ((c & 0xF0) == 0xE0) return 3;
  if ((c & 0xF8) == 0xF0) return 4;
  return 1;
}
uint32_t units(uint32_t len, Encoding enc) {
  switch (enc) {
    case Encoding::Utf8: return len;
    case Encoding::Utf32: return 1;
    default: return len == 4 ? 2 : 1;
  }
}
uint32_t get_u32(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) throw nlohmann::json::type_error::create(302, std::string(key) + " must be a number", &j);
  if (it->is_number_integer() && it->get<long long>() < 0) return 0;
  double v = it->get<double>();
  if (v < 0) return 0;
  if (v > 4e9) return 4000000000u;
  return static_cast<uint32_t>(v);
}
}  // namespace

void to_json(nlohmann::json& j, const Position& p) { j = {{"line", p.line}, {"character", p.character}}; }
void from_json(const nlohmann::json& j, Position& p) {
  p.line = get_u32(j, "line");
  p.character = get_u32(j, "character");
}
void to_json(nlohmann::json& j, const Range& r) { j = {{"start", r.start}, {"end", r.end}}; }
void from_json(const nlohmann::json& j, Range& r) {
  r.start = j.at("start").get<Position>();
  r.end = j.at("end").get<Position>();
}
void to_json(nlohmann::json& j, const Location& l) { j = {{"uri", l.uri}, {"range", l.range}}; }
void to_json(nlohmann::json& j, const RelatedInformation& r) { j = {{"location", r.location}, {"message", r.message}}; }
void to_json(nlohmann::json& j, const Diagnostic& d) {
  j = {{"range", d.range}, {"severity", static_cast<int>(d.severity)}, {"source", d.source}, {"message", d.message}};
  if (!d.code.empty()) j["code"] = d.code;
  if (!d.href.empty()) j["codeDescription"] = {{"href", d.href}};
  if (!d.related.empty()) j["relatedInformation"] = d.related;
  if (!d.data.is_null()) j["data"] = d.data;
}
void from_json(const nlohmann::json& j, Diagnostic& d) {
  d.range = j.at("range").get<Range>();
  if (j.contains("severity") && j["severity"].is_number_integer())
    d.severity = static_cast<DiagnosticSeverity>(std::clamp(j["severity"].get<int>(), 1, 4));
  if (j.contains("code") && j["code"].is_string()) d.code = j["code"].get<std::string>();
  if (j.contains("message") && j["message"].is_string()) d.message = j["message"].get<std::string>();
  if (j.contains("data")) d.data = j["data"];
}
void to_json(nlohmann::json& j, const TextEdit& e) { j = {{"range", e.range}, {"newText", e.new_text}}; }
void from_json(const nlohmann::json& j, ContentChange& c) {
  c.text = j.at("text").get<std::string>();
  if (j.contains("range") && !j["range"].is_null()) c.range = j["range"].get<Range>();
}

LineIndex::LineIndex(std::string_view text) : text_(text) {
  starts_.push_back(0);
  for (uint32_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') starts_.push_back(i + 1);
    else if (text[i] == '\r' && (i + 1 >= text.size() || text[i + 1] != '\n')) starts_.push_back(i + 1);
  }
}

Position LineIndex::position(uint32_t off, Encoding enc) const {
  off = std::min<uint32_t>(off, static_cast<uint32_t>(text_.size()));
  auto it = std::upper_bound(starts_.begin(), starts_.end(), off);
  uint32_t line = static_cast<uint32_t>(it - starts_.begin()) - 1;
  uint32_t col = 0;
  for (uint32_t b = starts_[line]; b < off;) {
    uint32_t len = seq_len(static_cast<unsigned char>(text_[b]));
    if (b + len > off) len = off - b;  // an offset inside a sequence: count what is before it
    col += units(len, enc);
    b += len;
  }
  return {line, col};
}

uint32_t LineIndex::offset(Position p, Encoding enc) const {
  if (p.line >= starts_.size()) return static_cast<uint32_t>(text_.size());
  uint32_t b = starts_[p.line];
  uint32_t end = p.line + 1 < starts_.size() ? starts_[p.line + 1] : static_cast<uint32_t>(text_.size());
  // the line's content ends before its terminator
  while (end > b && (text_[end - 1] == '\n' || text_[end - 1] == '\r')) --end;
  uint32_t col = 0;
  while (b < end && col < p.character) {
    uint32_t len = std::min(seq_len(static_cast<unsigned char>(text_[b])), end - b);
    uint32_t u = units(len, enc);
    if (col + u > p.character) break;  // inside a surrogate pair or a UTF-8 sequence: stay before it
    col += u;
    b += len;
  }
  return b;
}

void apply_change(std::string& text, const ContentChange& change, Encoding enc) {
  if (!change.range) {
    text = change.text;
    return;
  }
  LineIndex idx(text);
  uint32_t a = idx.offset(change.range->start, enc), b = idx.offset(change.range->end, enc);
  if (b < a) std::swap(a, b);
  text.replace(a, b - a, change.text);
}

namespace {
int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::string uri_to_path(std::string_view uri) {
  constexpr std::string_view kScheme = "file://";
  if (uri.size() < kScheme.size()) return {};
  std::string scheme(uri.substr(0, kScheme.size()));
  for (auto& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != kScheme) return {};
  std::string_view rest = uri.substr(kScheme.size());
  // file://host/path: only an empty host or localhost names this machine
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return {};
  std::string_view host = rest.substr(0, slash);
  if (!host.empty() && host != "localhost") return {};
  rest = rest.substr(slash);
  if (size_t q = rest.find_first_of("?#"); q != std::string_view::npos) rest = rest.substr(0, q);
  std::string out;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size()) {
      int h = hexval(rest[i + 1]), l = hexval(rest[i + 2]);
      if (h >= 0 && l >= 0) {
        out.push_back(static_cast<char>(h * 16 + l));
        i += 2;
        continue;
      }
    }
    out.push_back(rest[i]);
  }
  if (out.find('\0') != std::string::npos) return {};
  return out;
}

std::string path_to_uri(std::string_view path) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "file://";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') out.push_back(static_cast<char>(c));
    else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

nlohmann::json response(const nlohmann::json& id, nlohmann::json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}
nlohmann::json error_response(const nlohmann::json& id, int code, std::string message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", std::move(message)}}}};
}
nlohmann::json notification(std::string method, nlohmann::json params) {
  return {{"jsonrpc", "2.0"}, {"method", std::move(method)}, {"params", std::move(params)}};
}
nlohmann::json request(const nlohmann::json& id, std::string method, nlohmann::json params) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", std::move(method)}, {"params", std::move(params)}};
}

}  // namespace tl::lsp
