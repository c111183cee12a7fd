// The fuzz targets without libFuzzer: runs LLVMFuzzerTestOneInput on every file under the
// folders and files given (seeds and fuzz/regressions/<target>/, where each crash a fuzzer found
// is kept), so that the normal build and CI replay them. Exit 0 when every input ran.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  size_t n = 0;
  auto run = [&](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    ++n;
  };
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (fs::is_directory(argv[i], ec)) {
      std::vector<fs::path> ps;
      for (auto& e : fs::recursive_directory_iterator(argv[i], ec))
        if (e.is_regular_file()) ps.push_back(e.path());
      for (auto& p : ps) run(p);
    } else if (fs::is_regular_file(argv[i], ec)) {
      run(argv[i]);
    }
  }
  std::printf("replayed %zu inputs\n", n);
  return n > 0 ? 0 : 1;
}
