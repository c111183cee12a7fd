# `cmake --install` and `cpack -G DEB` (docs/install.md). Installed: the trainlint binary, the
# runtime shim in a private library folder, the Python bootstrap of `trainlint run`, the rule
# docs, README and docs/. Nothing of the tests or benchmarks is installed.
#
#   bin/trainlint
#   lib/trainlint/libtrainlint_shim.so                     (${CMAKE_INSTALL_LIBDIR}/trainlint)
#   lib/trainlint/trainlint-clang.so                       (the typed C++ path, loaded when used)
#   share/trainlint/trainlint_boot/{__init__,sitecustomize,tlboot_*}.py
#   share/doc/trainlint/{README.md,docs/,rules/}
#
# The installed binary finds the shim and the bootstrap relative to its own folder: the paths
# from bindir are computed here and compiled into analyzer/runtime/launcher.cpp, so an install
# moved to another prefix (`cmake --install --prefix`, a package unpacked anywhere) still works.
include(GNUInstallDirs)

set(TRAINLINT_INSTALL_SHIM_DIR ${CMAKE_INSTALL_LIBDIR}/trainlint)
set(TRAINLINT_INSTALL_BOOT_DIR ${CMAKE_INSTALL_DATADIR}/trainlint/trainlint_boot)
foreach(kind SHIM BOOT)
  set(dir ${TRAINLINT_INSTALL_${kind}_DIR})
  if(NOT IS_ABSOLUTE ${dir})
    set(dir ${CMAKE_INSTALL_PREFIX}/${dir})
  endif()
  file(RELATIVE_PATH rel_${kind} ${CMAKE_INSTALL_FULL_BINDIR} ${dir})
endforeach()
set_property(SOURCE ${PROJECT_SOURCE_DIR}/analyzer/runtime/launcher.cpp APPEND PROPERTY COMPILE_DEFINITIONS
  TRAINLINT_INSTALL_SHIM_DIR="${rel_SHIM}" TRAINLINT_INSTALL_BOOT_DIR="${rel_BOOT}")
set_property(SOURCE ${PROJECT_SOURCE_DIR}/analyzer/cpp/typed_path.cpp APPEND PROPERTY COMPILE_DEFINITIONS
  TRAINLINT_INSTALL_LIB_DIR="${rel_SHIM}")

install(TARGETS trainlint RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET trainlint_shim)
  install(TARGETS trainlint_shim LIBRARY DESTINATION ${TRAINLINT_INSTALL_SHIM_DIR})
endif()
if(TARGET trainlint_clang)
  install(TARGETS trainlint_clang LIBRARY DESTINATION ${TRAINLINT_INSTALL_SHIM_DIR})
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/shim/python/trainlint_boot/ DESTINATION ${TRAINLINT_INSTALL_BOOT_DIR}
  FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs FILES_MATCHING PATTERN "*.md")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/rules/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/rules FILES_MATCHING PATTERN "*.md")

# ---- cpack -G DEB -----------------------------------------------------------------------------
set(TRAINLINT_DEB_MAINTAINER "trainlint maintainers <maintainers@trainlint.invalid>"
  CACHE STRING "Maintainer field of the .deb made by cpack -G DEB")
set(CPACK_PACKAGE_NAME trainlint)
set(CPACK_PACKAGE_VENDOR "trainlint")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "linter for PyTorch training code that finds what leaves a GPU idle")
set(CPACK_PACKAGE_DESCRIPTION
  "trainlint finds the habits in deep-learning training code that leave a GPU idle: gc.collect()
every step, a checkpoint every iteration, a DataLoader without workers or pinned memory,
nn.DataParallel instead of DDP, and more, and explains what each one costs. `trainlint run`
runs a training program under a small runtime shim and measures what each finding costs.")
set(CPACK_PACKAGE_INSTALL_DIRECTORY trainlint)
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)
set(CPACK_SOURCE_GENERATOR "")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_NAME trainlint)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # trainlint_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${TRAINLINT_DEB_MAINTAINER})
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends from the ELF files' needs, by dpkg-shlibdeps (dpkg-dev): libc6, libstdc++6, libgcc-s1 on
# Debian 12 (tree-sitter is compiled in). The shim loads CUPTI with dlopen, so nothing of CUDA is a dependency.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# `trainlint run` starts the user's Python; the bootstrap needs only its standard library.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3, pre-commit")
# Bytecode that Python may write beside the bootstrap is removed before the package is.
set(TRAINLINT_DEB_BOOT_DIR ${CPACK_PACKAGING_INSTALL_PREFIX}/${TRAINLINT_INSTALL_BOOT_DIR})
configure_file(${PROJECT_SOURCE_DIR}/cmake/deb/prerm.in ${CMAKE_BINARY_DIR}/deb/prerm @ONLY)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/deb/prerm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
