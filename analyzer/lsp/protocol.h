// LSP 3.17 protocol values used by `trainlint lsp`: plain structs with nlohmann_json to/from
// functions (clangd's Protocol.h habit), position encodings and file URIs. No server logic here.
//
// Positions: inside trainlint offsets are bytes; at the LSP boundary a position's `character`
// counts UTF-16 code units by default, or UTF-8 bytes / UTF-32 code points when the client
// negotiated `positionEncoding`. Out-of-range positions are clamped (a line past the end to the
// end of the text, a character past the end of its line to the end of that line), never trusted.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tl::lsp {

// JSON-RPC and LSP error codes.
enum ErrorCode : int {
  ParseError = -32700,
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  InvalidParams = -32602,
  InternalError = -32603,
  ServerNotInitialized = -32002,
  RequestFailed = -32803,
  ServerCancelled = -32802,
  RequestCancelled = -32800,
};

enum class Encoding { Utf8, Utf16, Utf32 };
std::string_view encoding_name(Encoding e);
std::optional<Encoding> parse_encoding(std::string_view s);

struct Position {
  uint32_t line = 0;
  uint32_t character = 0;
  bool operator==(const Position&) const = default;
};
struct Range {
  Position start, end;
  bool operator==(const Range&) const = default;
};
struct Location {
  std::string uri;
  Range range;
  bool operator==(const Location&) const = default;
};
struct RelatedInformation {
  Location location;
  std::string message;
  bool operator==(const RelatedInformation&) const = default;
};

enum class DiagnosticSeverity : int { Error = 1, Warning = 2, Information = 3, Hint = 4 };

struct Diagnostic {
  Range range;
  DiagnosticSeverity severity = DiagnosticSeverity::Warning;
  std::string code;       // TL101 (empty for file messages)
  std::string href;       // codeDescription.href (empty: none)
  std::string source = "trainlint";
  std::string message;
  std::vector<RelatedInformation> related;
  nlohmann::json data;    // server data echoed back in code actions (fingerprint, slug)
  bool operator==(const Diagnostic&) const = default;
};

struct TextEdit {
  Range range;
  std::string new_text;
};

struct ContentChange {
  std::optional<Range> range;  // absent: the whole text is replaced
  std::string text;
};

void to_json(nlohmann::json& j, const Position& p);
void from_json(const nlohmann::json& j, Position& p);
void to_json(nlohmann::json& j, const Range& r);
void from_json(const nlohmann::json& j, Range& r);
void to_json(nlohmann::json& j, const Location& l);
void to_json(nlohmann::json& j, const RelatedInformation& r);
void to_json(nlohmann::json& j, const Diagnostic& d);
void from_json(const nlohmann::json& j, Diagnostic& d);
void to_json(nlohmann::json& j, const TextEdit& e);
void from_json(const nlohmann::json& j, ContentChange& c);

// A document's text with its line starts, for converting byte offsets to and from positions.
class LineIndex {
 public:
  explicit LineIndex(std::string_view text);
  Position position(uint32_t byte_offset, Encoding enc) const;
  // Clamped: never past the end of the text, never inside a UTF-8 sequence.
  uint32_t offset(Position p, Encoding enc) const;
  uint32_t line_count() const { return static_cast<uint32_t>(starts_.size()); }

 private:
  std::string_view text_;
  std::vector<uint32_t> starts_;
};

// Applies one change (range replace, or whole text) to `text`.
void apply_change(std::string& text, const ContentChange& change, Encoding enc);

// file:// URIs <-> absolute paths (percent-encoding per RFC 3986). An URI that is not a file URI
// gives an empty path.
std::string uri_to_path(std::string_view uri);
std::string path_to_uri(std::string_view abs_path);

// Builds JSON-RPC messages.
nlohmann::json response(const nlohmann::json& id, nlohmann::json result);
nlohmann::json error_response(const nlohmann::json& id, int code, std::string message);
nlohmann::json notification(std::string method, nlohmann::json params);
nlohmann::json request(const nlohmann::json& id, std::string method, nlohmann::json params);

}  // namespace tl::lsp
