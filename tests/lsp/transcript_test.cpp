// Transcript tests of `trainlint lsp` (clangd's lit-test habit, without lit): each
// tests/lsp/transcripts/*.lsp file is a conversation. Blocks start with a line `--- KIND [ARG]`:
//
//   --- file PATH        the block's text is written to PATH under a fresh temporary workspace
//   --- send             a JSON message, framed and sent to the server
//   --- raw              bytes sent as they are (`\r`, `\n` escapes), for broken framing
//   --- expect           a JSON pattern: the first message from the server (in arrival order, not
//                        yet claimed) that contains it must arrive within 10 s
//   --- none MS          a JSON pattern no message may match for MS milliseconds
//   --- exit CODE        the server must exit with CODE
//
// In send/expect/none blocks, lines starting with `#` are comments, `${ROOT}` is the workspace
// folder, `${URI:PATH}` the file URI of a workspace file, `${SOURCE_URI:PATH}` that of a file of
// the source tree and `${TEXT:PATH}` a workspace file's text as a JSON string. A pattern string
// starting with `~` matches any string containing the rest. A pattern object matches when every key matches; arrays match element by element and
// must have the same length, so `"diagnostics": []` asserts there are none.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "analyzer/lsp/protocol.h"
#include "lsp/lsp_client.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Block {
  std::string kind, arg, body;
  int line = 0;
};

std::vector<Block> parse_transcript(const std::string& text) {
  std::vector<Block> blocks;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind("--- ", 0) == 0) {
      Block b;
      b.line = n;
      std::string rest = line.substr(4);
      size_t sp = rest.find(' ');
      b.kind = rest.substr(0, sp);
      if (sp != std::string::npos) b.arg = rest.substr(sp + 1);
      blocks.push_back(b);
      continue;
    }
    if (blocks.empty()) continue;  // the header comment
    Block& b = blocks.back();
    if (b.kind != "file" && line.rfind("#", 0) == 0) continue;
    b.body += line + "\n";
  }
  return blocks;
}

std::string substitute(std::string s, const fs::path& root) {
  std::smatch m;
  static const std::regex uri_re(R"(\$\{URI:([^}]*)\})"), text_re(R"(\$\{TEXT:([^}]*)\})");
  while (std::regex_search(s, m, uri_re))
    s.replace(m.position(0), m.length(0), tl::lsp::path_to_uri((root / m[1].str()).string()));
  while (std::regex_search(s, m, text_re))
    s.replace(m.position(0), m.length(0), json(tl::test::read_file(root / m[1].str())).dump());
  static const std::regex src_re(R"(\$\{SOURCE_URI:([^}]*)\})");
  while (std::regex_search(s, m, src_re))
    s.replace(m.position(0), m.length(0),
              tl::lsp::path_to_uri((fs::path(tl::test::source_dir()) / m[1].str()).lexically_normal().string()));
  size_t p;
  while ((p = s.find("${ROOT}")) != std::string::npos) s.replace(p, 7, root.string());
  return s;
}

std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      char c = s[i + 1];
      if (c == 'r' || c == 'n' || c == '\\') {
        out.push_back(c == 'r' ? '\r' : c == 'n' ? '\n' : '\\');
        ++i;
        continue;
      }
    }
    if (s[i] == '\n') continue;  // line breaks of the transcript file are not part of raw bytes
    out.push_back(s[i]);
  }
  return out;
}

class Transcript : public ::testing::TestWithParam<std::string> {};

TEST_P(Transcript, Conversation) {
  fs::path file = fs::path(tl::test::source_dir()) / "tests" / "lsp" / "transcripts" / GetParam();
  auto blocks = parse_transcript(tl::test::read_file(file));
  ASSERT_FALSE(blocks.empty()) << file;
  tl::test::TempDir ws;
  fs::path root = fs::canonical(ws.path);
  // files first, then the conversation (a file block after a send is written at that point)
  std::unique_ptr<tl::test::LspClient> client;
  auto start = [&] {
    if (!client) client = std::make_unique<tl::test::LspClient>(tl::test::binary(), root.string());
  };
  for (auto& b : blocks) {
    std::string where = file.filename().string() + ":" + std::to_string(b.line) + " (" + b.kind + ")";
    if (b.kind == "file") {
      tl::test::write_file(root / b.arg, b.body);
      continue;
    }
    start();
    ASSERT_TRUE(client->running());
    if (b.kind == "send") {
      json msg = json::parse(substitute(b.body, root), nullptr, false);
      ASSERT_FALSE(msg.is_discarded()) << where << ": not JSON";
      client->send(msg);
    } else if (b.kind == "raw") {
      client->send_raw(unescape(substitute(b.body, root)));
    } else if (b.kind == "expect") {
      json pat = json::parse(substitute(b.body, root), nullptr, false);
      ASSERT_FALSE(pat.is_discarded()) << where << ": not JSON";
      auto got = client->wait_for([&](const json& m) { return tl::test::json_contains(m, pat); });
      if (!got) {
        std::string seen;
        for (auto& m : client->unclaimed()) seen += "  " + m.dump() + "\n";
        FAIL() << where << ": no message matching\n  " << pat.dump() << "\nunclaimed messages:\n" << seen;
      }
    } else if (b.kind == "none") {
      json pat = json::parse(substitute(b.body, root), nullptr, false);
      ASSERT_FALSE(pat.is_discarded()) << where << ": not JSON";
      auto got = client->wait_for([&](const json& m) { return tl::test::json_contains(m, pat); },
                                  std::chrono::milliseconds(std::stoi(b.arg)));
      EXPECT_FALSE(got) << where << ": unexpected message " << got->msg.dump();
    } else if (b.kind == "exit") {
      EXPECT_EQ(client->wait_exit(), std::stoi(b.arg)) << where;
    } else {
      FAIL() << where << ": unknown block kind";
    }
  }
}

std::vector<std::string> transcripts() {
  std::vector<std::string> names;
  for (auto& e : fs::directory_iterator(fs::path(TRAINLINT_SOURCE_DIR) / "tests" / "lsp" / "transcripts"))
    if (e.path().extension() == ".lsp") names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Lsp, Transcript, ::testing::ValuesIn(transcripts()), [](const auto& info) {
  std::string n = fs::path(info.param).stem().string();
  for (auto& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
});

}  // namespace
