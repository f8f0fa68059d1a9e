# `make package` (cpack -G DEB in the release build): one Debian package, lowalloc, with the
# command, its recorder, the man page, the bash completion, the docs, and the headers, the CMake
# package and the pkg-config files. One package rather than lowalloc + lowalloc-dev: the headers
# are a few hundred kilobytes and need nothing at run time, so Depends stays the command's
# runtime libraries either way (no -dev package).
#
# Depends comes from dpkg-shlibdeps (package dpkg-dev) on the installed binaries: libc6,
# libstdc++6, libgcc-s1, libdw1, libelf1, libzstd1, libdeflate0. Without dpkg-shlibdeps (or file) the list
# is written out here. CPack adds a postinst and a postrm that run ldconfig (it sees a shared
# object under /usr/lib); harmless, ldconfig does not look in /usr/lib/lowalloc.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME lowalloc)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION
    "lowalloc run records every heap allocation of a program with its call stack;\nlowalloc report, advise, diff and check read the trace. Also the header-only\ncontainers small_vector, inplace_vector, small_string, arena and pool.")
set(CPACK_PACKAGE_CONTACT "lowalloc maintainers <lowalloc@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/package)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
find_program(LOWALLOC_DPKG_SHLIBDEPS dpkg-shlibdeps)
find_program(LOWALLOC_FILE_COMMAND file)  # CPack finds the binaries with file(1)
if(LOWALLOC_DPKG_SHLIBDEPS AND LOWALLOC_FILE_COMMAND)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libstdc++6, libgcc-s1, libdw1, libzstd1, libdeflate0")
endif()
include(CPack)
