// libFuzzer target: `trainlint lsp` fed one input as everything a client ever sends on standard
// input: the Content-Length framing, JSON-RPC bodies, every method the server answers (documents
// opened, edited at any range, hovered, asked for code actions and diagnostics, closed), until the
// input ends. The server's replies go to /dev/null. docs/hardening.md.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include "analyzer/lsp/server.h"
#include "analyzer/lsp/transport.h"

namespace {

// The server's replies are written and dropped. (The target must not change the working folder:
// libFuzzer reads and writes its corpus by the relative paths it was given.)
int null_fd() {
  static int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int in = memfd_create("lsp-input", MFD_CLOEXEC);
  if (in < 0) return 0;
  size_t done = 0;
  while (done < size) {
    ssize_t w = write(in, data + done, size - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  lseek(in, 0, SEEK_SET);
  {
    // a small body limit: an input's Content-Length may claim anything
    tl::lsp::Transport transport(in, null_fd(), 1u << 20);
    tl::lsp::Server server(transport);
    server.run();
  }  // the server's analysis thread is joined here
  close(in);
  return 0;
}
