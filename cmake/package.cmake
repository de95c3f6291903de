# CPack: `cpack -G DEB` in a build tree makes libtapegrad-dev_<version>_<arch>.deb, holding what
# `cmake --install` installs (configure with -DCMAKE_INSTALL_PREFIX=/usr for Debian's multiarch
# lib/<triplet> directories). From a static build (the default) the package's Depends are the
# Debian -dev packages a consumer's link needs: libopenblas-dev, zlib1g-dev and, with the OpenCL
# backend, ocl-icd-opencl-dev and libclblast-dev. From a shared build dpkg-shlibdeps computes
# the runtime packages libtapegrad.so needs.
#
# CUDA: the toolkit in /usr/local/cuda is no Debian package, so no Depends can name it; a package
# from a TG_CUDA=ON build would install but not link (static) or not load (shared) without it.
# The .deb is therefore made from a build configured with -DTG_CUDA=OFF, and cpack refuses a
# CUDA build (cmake/CPackProjectConfig.cmake.in). Installs that want the CUDA backend use
# `cmake --install` on a machine with the toolkit (scripts/check-package.sh does both).
set(CPACK_GENERATOR DEB)  # `cpack` alone makes the .deb
set(CPACK_PACKAGE_NAME tapegrad)
set(CPACK_PACKAGE_VENDOR tapegrad)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "C++17 autograd library with a LibTorch-like API")
set(CPACK_PACKAGE_DESCRIPTION "Tensors that record, a tape that runs backward, layers, optimizers
and data loading, lowered to OpenBLAS (and OpenCL with CLBlast when built in). Headers, the
library, a CMake package (find_package(tapegrad)) and a pkg-config file (tapegrad.pc).")
set(CPACK_PACKAGE_CONTACT "tapegrad developers")
set(CPACK_DEBIAN_PACKAGE_NAME libtapegrad-dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
if(BUILD_SHARED_LIBS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libopenblas-dev, zlib1g-dev")
  if(TG_OPENCL)
    string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", ocl-icd-opencl-dev | opencl-dev, libclblast-dev")
  endif()
  if(TG_MPI)
    string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libopenmpi-dev")
  endif()
endif()
set(TG_PACKAGE_CUDA ${TG_CUDA})
configure_file(${PROJECT_SOURCE_DIR}/cmake/CPackProjectConfig.cmake.in
  ${PROJECT_BINARY_DIR}/CPackProjectConfig.cmake @ONLY)
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/CPackProjectConfig.cmake)
include(CPack)
