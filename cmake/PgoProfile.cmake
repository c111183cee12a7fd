# cmake -DPGO_DIR=<dir> -P PgoProfile.cmake: after the instrumented parse (cmake/Grammars.cmake,
# TRAINLINT_PGO), writes <dir>/profile.h, a comment holding the hash of the profile in
# <dir>/data. The libraries built with the profile include it, so that their objects are rebuilt
# exactly when the profile changes; it is rewritten only when it differs.
file(GLOB_RECURSE gcda LIST_DIRECTORIES false RELATIVE ${PGO_DIR}/data ${PGO_DIR}/data/*.gcda)
if(NOT gcda)
  message(FATAL_ERROR "TRAINLINT_PGO: the instrumented parse wrote no profile into ${PGO_DIR}/data "
                      "(configure with -DTRAINLINT_PGO=OFF to build without one)")
endif()
list(SORT gcda)
set(all "")
foreach(f IN LISTS gcda)
  file(SHA256 ${PGO_DIR}/data/${f} h)
  string(REGEX REPLACE ".*/objects/" "" name "${f}")  # the library and source, not the build folder
  string(APPEND all "${name} ${h}\n")
endforeach()
string(SHA256 profile_hash "${all}")
list(LENGTH gcda n)
file(WRITE ${PGO_DIR}/profile.h.new "/* trainlint: tree-sitter parse profile, ${n} files, ${profile_hash} */\n")
file(COPY_FILE ${PGO_DIR}/profile.h.new ${PGO_DIR}/profile.h ONLY_IF_DIFFERENT)
file(REMOVE ${PGO_DIR}/profile.h.new)
