# The tree-sitter grammars are fetched by package name through npm, pinned by
# grammars/package.json + package-lock.json (npm ci, no install scripts), and only their
# generated C sources are compiled here. Nothing generated is committed.
set(TRAINLINT_GRAMMARS_DIR ${PROJECT_SOURCE_DIR}/grammars)
set(TS_PYTHON_SRC ${TRAINLINT_GRAMMARS_DIR}/node_modules/tree-sitter-python/src)
set(TS_CPP_SRC ${TRAINLINT_GRAMMARS_DIR}/node_modules/tree-sitter-cpp/src)

# The tree-sitter runtime is fetched the same way, from its own folder (grammars/runtime: the
# grammars name different versions of the node package as an optional peer, so one lock cannot
# hold all three): its C core, vendored in the node package, is compiled in below.
set(TS_RUNTIME_DIR ${TRAINLINT_GRAMMARS_DIR}/runtime/node_modules/tree-sitter/vendor/tree-sitter/lib)

# npm ci in `dir` unless every file after `what` is already there.
function(trainlint_npm_ci dir what)
  set(missing FALSE)
  foreach(f IN LISTS ARGN)
    if(NOT EXISTS ${f})
      set(missing TRUE)
    endif()
  endforeach()
  if(NOT missing)
    return()
  endif()
  find_program(NPM_PROGRAM npm REQUIRED)
  message(STATUS "Fetching ${what} with npm ci")
  execute_process(
    COMMAND ${NPM_PROGRAM} ci --ignore-scripts --no-audit --no-fund --loglevel=error
    WORKING_DIRECTORY ${dir}
    RESULT_VARIABLE npm_result)
  foreach(f IN LISTS ARGN)
    if(NOT npm_result EQUAL 0 OR NOT EXISTS ${f})
      message(FATAL_ERROR "npm ci in ${dir} failed; ${what} are required")
    endif()
  endforeach()
endfunction()
trainlint_npm_ci(${TRAINLINT_GRAMMARS_DIR} "the pinned tree-sitter-python and tree-sitter-cpp grammars"
                 ${TS_PYTHON_SRC}/parser.c ${TS_CPP_SRC}/parser.c)
trainlint_npm_ci(${TRAINLINT_GRAMMARS_DIR}/runtime "the pinned tree-sitter runtime's sources"
                 ${TS_RUNTIME_DIR}/src/lib.c ${TS_RUNTIME_DIR}/src/subtree.h)

# The runtime, compiled in rather than Debian's shared libtree-sitter 0.20.7, for a measured
# reason (callgrind on Debian's torch package, 2026-11-27; bench/README.md):
# - the front ends copy each tree by reading the runtime's own subtree structures
#   (analyzer/core/flat_tree_build.h), which needs the private headers of the exact runtime linked:
#   the copy went from 2.99 G instructions through the public TSTreeCursor to about 0.7 G, and
#   `trainlint -j 1` from 18.85 G to 16.82 G;
# - the parse itself costs no more: the bare parse (bench/bare) 13.44 G against 13.58 G.
# The pinned core (npm tree-sitter 0.22.4 vendors tree-sitter 66cd81a4, language ABI 14, whose
# parser.h is byte for byte the grammars' own) gives the same trees as 0.20.7 on every file
# without syntax errors (3.90 M Python and 1.46 M C++ nodes compared); where a file has syntax
# errors, its error recovery can put ERROR and MISSING nodes elsewhere.
add_library(tree_sitter_runtime STATIC ${TS_RUNTIME_DIR}/src/lib.c)
target_include_directories(tree_sitter_runtime SYSTEM PUBLIC ${TS_RUNTIME_DIR}/include)
target_include_directories(tree_sitter_runtime PRIVATE ${TS_RUNTIME_DIR}/src)
set_target_properties(tree_sitter_runtime PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
target_compile_definitions(tree_sitter_runtime PRIVATE _POSIX_C_SOURCE=200112L _DEFAULT_SOURCE)
target_compile_options(tree_sitter_runtime PRIVATE -w -O2)
# Its private headers, for the sources that read its subtrees (and only those: the names are
# generic, "tree.h", "parser.h"): an interface target they link PRIVATE.
add_library(tree_sitter_runtime_internals INTERFACE)
target_include_directories(tree_sitter_runtime_internals SYSTEM INTERFACE ${TS_RUNTIME_DIR}/src)

# tree-sitter-python's external scanner is compiled with two changes of ours, from a copy written
# into the build folder (the fetched sources are left as they are):
#
# 1. Speed, never a different tree. At every line end inside an indented block the scanner reads
#    ahead over all the comment lines that follow, to learn the next code line's indentation, and
#    the internal lexer then reads each of those comments again; the line end after each of them
#    starts the same read-ahead, so a block of k comment lines cost k^2/2 line reads (4,000
#    comment lines in a class: 6 s). The change returns as soon as the first comment line's
#    indentation is known when the answer can no longer be anything but "no token": no INDENT is
#    possible, no NEWLINE either, and the comment is indented at least as deep as the current
#    block, so that it cannot start a DEDENT (the scanner's own condition). That is the usual
#    comment block; a block of comments indented less than the code around it (code commented
#    out at column 0 inside a function) still needs the read-ahead (docs/hardening.md).
#    tests/unit/python_scanner_test.cpp compiles the grammar as fetched beside it and requires the
#    same trees; bench/bench_lint.cpp (BM_CommentBlock) times both.
# 2. A fix. Deserialising the empty state (what tree-sitter does when a parse starts, and
#    whenever it goes back to the start of a file) reset the indentation and string stacks but not
#    the "inside an f-string" flag, so a parser that had just read a file ending inside an
#    f-string (`x = f"{y`) read the next file as if a dedent could not happen there: the lines
#    after a block were put inside it (trainlint reuses one parser per thread for every file).
#    The runtime compiled in below creates the scanner afresh for each parse, which hides that
#    case; the empty state deserialised within a parse still needs the fix.
#
# The patches are made against the pinned grammar's scanner, checked by its hash: a grammar bump
# stops the configuration here, so that both are looked at again rather than applied blindly.
set(TS_PYTHON_SCANNER_SHA256 411b2357bc1286b171fd042ccb0f640109074cc341d3cd78b5628144887f7ab8)
set(TS_PYTHON_SCANNER ${CMAKE_BINARY_DIR}/grammars/tree-sitter-python/scanner.c)
file(SHA256 ${TS_PYTHON_SRC}/scanner.c ts_python_scanner_sha)
if(NOT ts_python_scanner_sha STREQUAL TS_PYTHON_SCANNER_SHA256)
  message(FATAL_ERROR "${TS_PYTHON_SRC}/scanner.c is not the scanner cmake/Grammars.cmake patches "
                      "(was the pinned tree-sitter-python changed?); see the comment there")
endif()
file(READ ${TS_PYTHON_SRC}/scanner.c ts_python_scanner)
# Inserts `addition` after `anchor`, which must occur exactly once.
function(ts_insert_after var anchor addition)
  string(FIND "${${var}}" "${anchor}" first)
  string(FIND "${${var}}" "${anchor}" last REVERSE)
  if(first EQUAL -1 OR NOT first EQUAL last)
    message(FATAL_ERROR "cmake/Grammars.cmake: the scanner's text to patch is not there exactly once")
  endif()
  string(REPLACE "${anchor}" "${anchor}${addition}" patched "${${var}}")
  set(${var} "${patched}" PARENT_SCOPE)
endfunction()
ts_insert_after(ts_python_scanner [=[            if (first_comment_indent_length == -1) {
                first_comment_indent_length = (int32_t)indent_length;
            }
]=] [=[            /* trainlint (cmake/Grammars.cmake): nothing later can make this call return a token */
            if (!valid_symbols[INDENT] && !(valid_symbols[NEWLINE] && !error_recovery_mode) &&
                (scanner->indents.size == 0 ||
                 first_comment_indent_length >= (int32_t)*array_back(&scanner->indents))) {
                return false;
            }
]=])
ts_insert_after(ts_python_scanner [=[    array_delete(&scanner->indents);
    array_push(&scanner->indents, 0);
]=] [=[    scanner->inside_f_string = false; /* trainlint (cmake/Grammars.cmake): the empty state too */
]=])
file(WRITE ${TS_PYTHON_SCANNER}.new "${ts_python_scanner}")
configure_file(${TS_PYTHON_SCANNER}.new ${TS_PYTHON_SCANNER} COPYONLY)  # rewritten only when it differs
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${TS_PYTHON_SRC}/scanner.c)

add_library(tree_sitter_python STATIC ${TS_PYTHON_SRC}/parser.c ${TS_PYTHON_SCANNER})
target_include_directories(tree_sitter_python PRIVATE ${TS_PYTHON_SRC})
set_target_properties(tree_sitter_python PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
target_compile_options(tree_sitter_python PRIVATE -w -O2)
# The external scanners allocate through the runtime's allocator (the one trainlint gives it,
# analyzer/core/parse_arena.h), not malloc: their arrays grow without a check of what malloc
# returns, so under a memory limit (`ulimit -v`) a refused block was a segmentation fault in the
# scanner; the runtime's allocator ends the run with a message instead.
target_compile_definitions(tree_sitter_python PRIVATE TREE_SITTER_REUSE_ALLOCATOR)

# The Python grammar exactly as fetched, its symbols renamed (tree_sitter_python_upstream), for
# the test that parses with both and requires the same trees (tests/unit/python_scanner_test.cpp)
# and the benchmark that times both (bench/bench_lint.cpp, BM_CommentBlock).
if(TRAINLINT_TESTS OR TRAINLINT_BENCH)
  add_library(tree_sitter_python_upstream STATIC EXCLUDE_FROM_ALL ${TS_PYTHON_SRC}/parser.c ${TS_PYTHON_SRC}/scanner.c)
  target_include_directories(tree_sitter_python_upstream PRIVATE ${TS_PYTHON_SRC})
  set_target_properties(tree_sitter_python_upstream PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
  target_compile_options(tree_sitter_python_upstream PRIVATE -w -O2)
  set(ts_renamed tree_sitter_python=tree_sitter_python_upstream)
  foreach(fn create destroy scan serialize deserialize)
    list(APPEND ts_renamed tree_sitter_python_external_scanner_${fn}=tree_sitter_python_upstream_external_scanner_${fn})
  endforeach()
  target_compile_definitions(tree_sitter_python_upstream PRIVATE ${ts_renamed})
  if(TRAINLINT_SANITIZE)  # a reference only, like the parse tables below
    target_compile_options(tree_sitter_python_upstream PRIVATE -fno-sanitize=all)
  endif()
endif()

# tree-sitter-cpp 0.23.4 (ABI 14): its parser.c is 17 MB of tables but compiles as one object in
# about 4 s at -O2 on the 2-core build machine (205 MB peak memory), so it needs no special
# treatment beyond being its own static library, which ccache keeps across builds.
add_library(tree_sitter_cpp STATIC ${TS_CPP_SRC}/parser.c ${TS_CPP_SRC}/scanner.c)
target_include_directories(tree_sitter_cpp PRIVATE ${TS_CPP_SRC})
set_target_properties(tree_sitter_cpp PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
target_compile_options(tree_sitter_cpp PRIVATE -w -O2)
target_compile_definitions(tree_sitter_cpp PRIVATE TREE_SITTER_REUSE_ALLOCATOR)  # as tree_sitter_python's
# The generated parsers are parse tables (17 MB of C for C++): sanitizing them buys nothing and
# costs minutes of a sanitized build. The hand-written external scanners stay sanitized.
if(TRAINLINT_SANITIZE)
  set_source_files_properties(${TS_PYTHON_SRC}/parser.c ${TS_CPP_SRC}/parser.c
    PROPERTIES COMPILE_OPTIONS "-fno-sanitize=all")
endif()

# Profile-guided optimisation of the parsers (GCC), for a measured reason: a cold run is almost
# all tree-sitter parsing (the bare parse is 0.9 of `trainlint -j 1`), and the parse tables are
# read through branches whose directions GCC cannot guess. The runtime and both grammars are
# compiled twice: once instrumented and linked into the bare parse (bench/bare/bare_parse.c),
# which parses the repository's own Python and C++ sources to record where parsing goes, then
# again for trainlint with that profile (-fprofile-use; functions the corpus never reached are
# optimised as without it, -fprofile-partial-training). A profile changes no tree, only code
# layout, inlining and unrolling. Bare parse of pytorch-image-models (not in the corpus; 2-core
# build machine, 25 interleaved runs, medians): 570 ms -> 480 ms, 16% less; a profile of Debian's
# torch package itself gave 469 ms, so the small corpus loses little (bench/README.md).
# Off for sanitizer and fuzz builds (their instrumentation and clang's profile format differ).
# GCC 11 or later (the profile files named by -dumpdir), and a build that can run what it builds.
option(TRAINLINT_PGO "Optimise the tree-sitter runtime and grammars with a profile (GCC)" ON)
# The corpus: the examples, the test fixtures (Python and LibTorch C++) and trainlint's own C++;
# a source tree without them (an export of the program alone) is built without a profile.
set(pgo_corpus)
foreach(d examples tests/fixtures bench/truth analyzer)
  if(IS_DIRECTORY ${PROJECT_SOURCE_DIR}/${d})
    list(APPEND pgo_corpus ${d})
  endif()
endforeach()
set(pgo_off_because "")
if(NOT CMAKE_C_COMPILER_ID STREQUAL "GNU" OR CMAKE_C_COMPILER_VERSION VERSION_LESS 11)
  set(pgo_off_because "the C compiler is not GCC 11 or later")
elseif(CMAKE_CROSSCOMPILING)
  set(pgo_off_because "a cross build cannot run the profiling parse")
elseif(NOT pgo_corpus MATCHES "tests/fixtures")
  set(pgo_off_because "the sources to profile on (tests/fixtures) are not in the source tree")
endif()
if(TRAINLINT_PGO AND NOT TRAINLINT_SANITIZE AND NOT TRAINLINT_FUZZ AND pgo_off_because)
  message(STATUS "TRAINLINT_PGO: the parsers are built without a profile: ${pgo_off_because}")
endif()
if(TRAINLINT_PGO AND NOT pgo_off_because AND NOT TRAINLINT_SANITIZE AND NOT TRAINLINT_FUZZ)
  set(pgo_dir ${CMAKE_CURRENT_BINARY_DIR}/pgo)
  # GCC names a profile's file, and identifies a static function in it, by the object's "dump"
  # path (by default the object file's): the instrumented twin and the library built with its
  # profile are given the same one, a folder per library (nothing is written there).
  foreach(lib tree_sitter_runtime tree_sitter_python tree_sitter_cpp)
    get_target_property(srcs ${lib} SOURCES)
    add_library(${lib}_pgo_train STATIC EXCLUDE_FROM_ALL ${srcs})
    # (this block comes after everything that sets these properties on the libraries)
    foreach(prop INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS C_STANDARD POSITION_INDEPENDENT_CODE)
      get_target_property(v ${lib} ${prop})
      if(NOT v STREQUAL "v-NOTFOUND")
        set_property(TARGET ${lib}_pgo_train PROPERTY ${prop} "${v}")
      endif()
    endforeach()
    target_compile_options(${lib}_pgo_train PRIVATE -dumpdir ${pgo_dir}/objects/${lib}/
      -fprofile-generate=${pgo_dir}/data)
    # profile.h holds the profile's hash: an object is rebuilt when it changes. (ccache caches the
    # instrumented objects but not these: it does not know -fprofile-partial-training. The
    # profile itself differs from one profiling run to the next in a few recorded addresses, so a
    # new build folder would miss anyway; they compile in about 8 s.)
    target_compile_options(${lib} PRIVATE -dumpdir ${pgo_dir}/objects/${lib}/
      -fprofile-use=${pgo_dir}/data -fprofile-partial-training -include ${pgo_dir}/profile.h)
    add_dependencies(${lib} trainlint_pgo_profile)
  endforeach()
  add_executable(trainlint_pgo_trainer EXCLUDE_FROM_ALL ${PROJECT_SOURCE_DIR}/bench/bare/bare_parse.c)
  target_include_directories(trainlint_pgo_trainer PRIVATE ${TS_RUNTIME_DIR}/include)
  target_link_libraries(trainlint_pgo_trainer PRIVATE
    tree_sitter_python_pgo_train tree_sitter_cpp_pgo_train tree_sitter_runtime_pgo_train)
  target_link_options(trainlint_pgo_trainer PRIVATE -fprofile-generate)
  set_target_properties(trainlint_pgo_trainer PROPERTIES C_STANDARD 11)
  add_custom_command(OUTPUT ${pgo_dir}/profile.h
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${pgo_dir}/data
    COMMAND trainlint_pgo_trainer ${pgo_corpus}
    COMMAND ${CMAKE_COMMAND} -DPGO_DIR=${pgo_dir} -P ${PROJECT_SOURCE_DIR}/cmake/PgoProfile.cmake
    DEPENDS trainlint_pgo_trainer ${PROJECT_SOURCE_DIR}/cmake/PgoProfile.cmake
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    COMMENT "Profiling the tree-sitter parsers on the repository's sources (TRAINLINT_PGO)"
    VERBATIM)
  add_custom_target(trainlint_pgo_profile DEPENDS ${pgo_dir}/profile.h)
endif()
