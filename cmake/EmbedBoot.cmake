# Embeds the Python bootstrap of `trainlint run` (every *.py under shim/python: the
# trainlint_boot package and sitecustomize.py) into the binary, so that the launcher writes it
# into its temporary folder without looking for files next to the executable. Paths stay
# relative to shim/python; analyzer/runtime/boot_files.h declares the table.
function(trainlint_embed_boot boot_dir out_cpp)
  file(GLOB_RECURSE files CONFIGURE_DEPENDS RELATIVE ${boot_dir} ${boot_dir}/*.py)
  list(FILTER files EXCLUDE REGEX "(^|/)__pycache__/")
  list(SORT files)
  set(arrays "")
  set(table "")
  foreach(rel ${files})
    file(READ ${boot_dir}/${rel} hex HEX)
    # bytes as a char array: no delimiter of a raw string literal can clash with the file's text
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
    string(LENGTH "${hex}" hexlen)
    math(EXPR len "${hexlen} / 2")
    string(MAKE_C_IDENTIFIER "${rel}" id)
    string(APPEND arrays "const char boot_${id}[] = {${bytes} 0};\n")
    string(APPEND table "    {\"${rel}\", std::string_view(boot_${id}, ${len})},\n")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${boot_dir}/${rel})
  endforeach()
  file(WRITE ${out_cpp}.tmp
"// Generated from shim/python/**/*.py by cmake/EmbedBoot.cmake. Do not edit.
#include \"analyzer/runtime/boot_files.h\"
namespace tl::runtime {
namespace {
${arrays}}  // namespace
const std::vector<BootFile>& boot_files() {
  static const std::vector<BootFile> files = {
${table}  };
  return files;
}
}  // namespace tl::runtime
")
  configure_file(${out_cpp}.tmp ${out_cpp} COPYONLY)
endfunction()
