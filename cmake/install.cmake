# Installing tapegrad for other projects (included from CMakeLists.txt when TG_INSTALL is on):
#   - the library, headers and the exported target tapegrad::tapegrad, with tapegradConfig.cmake
#     and tapegradConfigVersion.cmake for find_package(tapegrad);
#   - tapegrad.pc for pkg-config (pkg-config --static for libtapegrad.a);
#   - CPack: `cpack -G DEB` in the build tree makes libtapegrad-dev_<version>_<arch>.deb.
# scripts/check-package.sh builds and runs tests/consumer/ against all three.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TG_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tapegrad)

install(TARGETS tapegrad EXPORT tapegradTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT tapegradTargets NAMESPACE tapegrad:: DESTINATION ${TG_INSTALL_CMAKEDIR})

# CUDA and the shared library: libtapegrad.so needs libcublas.so.13 and libcudart.so.13, which
# live in the toolkit's lib directory (/usr/local/cuda/lib64), not in a Debian package and not
# always on the loader's path. The installed .so records that directory as its RUNPATH, so it
# loads on any machine that has the toolkit where the build found it. (cuBLAS cannot be linked
# in statically instead: this toolkit ships no libcublas_static.a.) A static libtapegrad.a
# leaves CUDA to the consumer's link through CUDA::cudart and CUDA::cublas (tapegradConfig.cmake
# finds the toolkit).
if(BUILD_SHARED_LIBS AND TG_CUDA)
  set_target_properties(tapegrad PROPERTIES INSTALL_RPATH "${CUDAToolkit_LIBRARY_DIR}")
endif()

# --- CMake package -----------------------------------------------------------------------------
# The config finds tapegrad's dependencies only for a static library; see the .in file.
if(TG_CUDA)
  get_filename_component(TG_CUDA_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tapegradConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tapegradConfig.cmake INSTALL_DESTINATION ${TG_INSTALL_CMAKEDIR})
# 0.x: a new minor version may break the API (and the ABI: the SONAME is libtapegrad.so.0.<minor>).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tapegradConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tapegradConfig.cmake
  ${PROJECT_BINARY_DIR}/tapegradConfigVersion.cmake DESTINATION ${TG_INSTALL_CMAKEDIR})

# --- pkg-config --------------------------------------------------------------------------------
# Libs.private and Requires.private list what a static libtapegrad.a needs on the link line
# (pkg-config --static --libs tapegrad); a shared libtapegrad.so needs nothing more.
# OpenBLAS goes in as -lopenblas, not as Requires.private: openblas: Debian's openblas.pc lists
# -lgfortran for a static OpenBLAS, which links only with libgfortran-*-dev installed.
function(tg_pc_link_flags out)
  set(flags "")
  foreach(lib IN LISTS ARGN)
    if(lib STREQUAL "Threads::Threads")
      list(APPEND flags ${CMAKE_THREAD_LIBS_INIT})
    elseif(lib MATCHES "^-")
      list(APPEND flags "${lib}")
    elseif(lib MATCHES "/lib([^/]+)\\.(so|a)(\\.[0-9.]+)?$")
      get_filename_component(dir "${lib}" DIRECTORY)
      if(NOT dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
        list(APPEND flags "-L${dir}")
      endif()
      list(APPEND flags "-l${CMAKE_MATCH_1}")
    elseif(NOT lib MATCHES "::")
      list(APPEND flags "-l${lib}")
    endif()
  endforeach()
  string(JOIN " " flags ${flags})
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()
set(TG_PC_REQUIRES_PRIVATE "")
set(TG_PC_LIBS_PRIVATE "")
if(NOT BUILD_SHARED_LIBS)
  set(TG_PC_REQUIRES_PRIVATE "zlib")
  tg_pc_link_flags(TG_PC_LIBS_PRIVATE ${BLAS_LIBRARIES} Threads::Threads)
  if(TG_OPENCL)
    string(APPEND TG_PC_REQUIRES_PRIVATE " OpenCL clblast")
  endif()
  if(TG_MPI)
    string(APPEND TG_PC_REQUIRES_PRIVATE " mpi-c")
  endif()
  if(TG_CUDA)
    # -rpath: the CUDA libraries are not on the loader's default path everywhere.
    set(TG_CUDA_LIBDIR ${CUDAToolkit_LIBRARY_DIR})
    string(APPEND TG_PC_LIBS_PRIVATE
      " -L${TG_CUDA_LIBDIR} -Wl,-rpath,${TG_CUDA_LIBDIR} -lcudart -lcublas")
    if(TG_NCCL)
      string(APPEND TG_PC_LIBS_PRIVATE " -lnccl")
    endif()
  endif()
endif()
# The prefix is the one installed into (cmake --install --prefix, DESTDIR, CPack), so the file is
# written at install time: configure now with the prefix left as @TG_PC_PREFIX@, fill it in then.
set(TG_PC_PREFIX "@TG_PC_PREFIX@")
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(TG_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(TG_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
set(TG_PC_FILE ${PROJECT_BINARY_DIR}/tapegrad.pc)
configure_file(${PROJECT_SOURCE_DIR}/cmake/tapegrad.pc.in ${TG_PC_FILE}.in @ONLY)
install(CODE "
  set(TG_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${TG_PC_FILE}.in\" \"${TG_PC_FILE}\" @ONLY)")
install(FILES ${TG_PC_FILE} DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# --- Debian package (cpack -G DEB) -------------------------------------------------------------
# Not in a parent project (add_subdirectory with TG_INSTALL=ON), whose CPack setup is its own.
if(TG_TOP_LEVEL)
  include(${PROJECT_SOURCE_DIR}/cmake/package.cmake)
endif()
