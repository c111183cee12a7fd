# The tree-sitter grammars are fetched by package name through npm, pinned by
# grammars/package.json + package-lock.json (npm ci, no install scripts), and only their
# generated C sources are compiled here. Nothing generated is committed.
set(TRAINLINT_GRAMMARS_DIR ${PROJECT_SOURCE_DIR}/grammars)
set(TS_PYTHON_SRC ${TRAINLINT_GRAMMARS_DIR}/node_modules/tree-sitter-python/src)
set(TS_CPP_SRC ${TRAINLINT_GRAMMARS_DIR}/node_modules/tree-sitter-cpp/src)

if(NOT EXISTS ${TS_PYTHON_SRC}/parser.c OR NOT EXISTS ${TS_CPP_SRC}/parser.c)
  find_program(NPM_PROGRAM npm REQUIRED)
  message(STATUS "Fetching pinned tree-sitter grammars with npm ci")
  execute_process(
    COMMAND ${NPM_PROGRAM} ci --ignore-scripts --no-audit --no-fund --loglevel=error
    WORKING_DIRECTORY ${TRAINLINT_GRAMMARS_DIR}
    RESULT_VARIABLE npm_result)
  if(NOT npm_result EQUAL 0 OR NOT EXISTS ${TS_PYTHON_SRC}/parser.c OR NOT EXISTS ${TS_CPP_SRC}/parser.c)
    message(FATAL_ERROR "npm ci in ${TRAINLINT_GRAMMARS_DIR} failed; the tree-sitter-python and tree-sitter-cpp grammars are required")
  endif()
endif()

add_library(tree_sitter_python STATIC ${TS_PYTHON_SRC}/parser.c ${TS_PYTHON_SRC}/scanner.c)
target_include_directories(tree_sitter_python PRIVATE ${TS_PYTHON_SRC})
set_target_properties(tree_sitter_python PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
target_compile_options(tree_sitter_python PRIVATE -w -O2)

# tree-sitter-cpp 0.23.4 (ABI 14, loads in Debian's libtree-sitter 0.20.7): its parser.c is 17 MB
# of tables but compiles as one object in about 4 s at -O2 on the 2-core build machine (205 MB
# peak memory), so it needs no special treatment beyond being its own static library, which
# ccache keeps across builds.
add_library(tree_sitter_cpp STATIC ${TS_CPP_SRC}/parser.c ${TS_CPP_SRC}/scanner.c)
target_include_directories(tree_sitter_cpp PRIVATE ${TS_CPP_SRC})
set_target_properties(tree_sitter_cpp PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
target_compile_options(tree_sitter_cpp PRIVATE -w -O2)
# The generated parsers are parse tables (17 MB of C for C++): sanitizing them buys nothing and
# costs minutes of a sanitized build. The hand-written external scanners stay sanitized.
if(TRAINLINT_SANITIZE)
  set_source_files_properties(${TS_PYTHON_SRC}/parser.c ${TS_CPP_SRC}/parser.c
    PROPERTIES COMPILE_OPTIONS "-fno-sanitize=all")
endif()
