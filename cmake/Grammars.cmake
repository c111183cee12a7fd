# The tree-sitter grammars are fetched by package name through npm, pinned by
# grammars/package.json + package-lock.json (npm ci, no install scripts), and only their
# generated C sources are compiled here. Nothing generated is committed.
set(TRAINLINT_GRAMMARS_DIR ${PROJECT_SOURCE_DIR}/grammars)
set(TS_PYTHON_SRC ${TRAINLINT_GRAMMARS_DIR}/node_modules/tree-sitter-python/src)

if(NOT EXISTS ${TS_PYTHON_SRC}/parser.c)
  find_program(NPM_PROGRAM npm REQUIRED)
  message(STATUS "Fetching pinned tree-sitter grammars with npm ci")
  execute_process(
    COMMAND ${NPM_PROGRAM} ci --ignore-scripts --no-audit --no-fund --loglevel=error
    WORKING_DIRECTORY ${TRAINLINT_GRAMMARS_DIR}
    RESULT_VARIABLE npm_result)
  if(NOT npm_result EQUAL 0 OR NOT EXISTS ${TS_PYTHON_SRC}/parser.c)
    message(FATAL_ERROR "npm ci in ${TRAINLINT_GRAMMARS_DIR} failed; the tree-sitter-python grammar is required")
  endif()
endif()

add_library(tree_sitter_python STATIC ${TS_PYTHON_SRC}/parser.c ${TS_PYTHON_SRC}/scanner.c)
target_include_directories(tree_sitter_python PRIVATE ${TS_PYTHON_SRC})
set_target_properties(tree_sitter_python PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
target_compile_options(tree_sitter_python PRIVATE -w -O2)
