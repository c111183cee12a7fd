/* The reference for the whole-process benchmark (bench/README.md): a bare tree-sitter parse of
 * the same files trainlint lints, and nothing else. It walks the folders given on the command line
 * (.py files, and the C++ extensions trainlint lints; symbolic links are not followed), reads each
 * file and parses it with the same pinned grammars (tree-sitter-python, tree-sitter-cpp) and the
 * same library trainlint links, then deletes the tree. It prints the number of files, bytes and syntax trees with errors, so that a run can be
 * checked to have seen the same input as trainlint. One thread, like `trainlint -j 1`.
 *
 * The build also links it, instrumented, to record the profile the parsers are compiled with
 * (cmake/Grammars.cmake, TRAINLINT_PGO): it parses the repository's own sources there. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <tree_sitter/api.h>

const TSLanguage* tree_sitter_python(void);
const TSLanguage* tree_sitter_cpp(void);

static TSParser* py_parser;
static TSParser* cpp_parser;
static size_t files, bytes, with_errors;

static int ends_with(const char* s, const char* suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void parse_file(TSParser* parser, const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return;
  size_t cap = 1 << 16, len = 0;
  char* buf = malloc(cap);
  size_t got;
  while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
    len += got;
    if (len == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  TSTree* tree = ts_parser_parse_string(parser, NULL, buf, (uint32_t)len);
  if (ts_node_has_error(ts_tree_root_node(tree))) ++with_errors;
  ts_tree_delete(tree);
  free(buf);
  ++files;
  bytes += len;
}

static void walk(const char* path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISREG(st.st_mode)) {
    static const char* const cpp[] = {".cpp", ".cc", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx"};
    if (ends_with(path, ".py")) parse_file(py_parser, path);
    for (size_t i = 0; i < sizeof cpp / sizeof *cpp; ++i)
      if (ends_with(path, cpp[i])) parse_file(cpp_parser, path);
    return;
  }
  if (!S_ISDIR(st.st_mode)) return;
  DIR* d = opendir(path);
  if (!d) return;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char* child;
    if (asprintf(&child, "%s/%s", path, e->d_name) < 0) break;
    walk(child);
    free(child);
  }
  closedir(d);
}

int main(int argc, char** argv) {
  py_parser = ts_parser_new();
  ts_parser_set_language(py_parser, tree_sitter_python());
  cpp_parser = ts_parser_new();
  ts_parser_set_language(cpp_parser, tree_sitter_cpp());
  for (int i = 1; i < argc; ++i) walk(argv[i]);
  ts_parser_delete(py_parser);
  ts_parser_delete(cpp_parser);
  fprintf(stderr, "bare_parse: %zu files, %zu bytes, %zu with syntax errors\n", files, bytes,
          with_errors);
  return 0;
}
