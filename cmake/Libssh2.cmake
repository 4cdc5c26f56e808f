# libssh2 >= 1.11 for tpush.
#
# Defines:
#   tpush::libssh2          imported target: headers first on the include path,
#                           links libcrypto (OpenSSL::Crypto) and Threads
#   TPUSH_LIBSSH2_VERSION   e.g. "1.11.1"
#
# Debian 12 ships 1.10, which cannot log in with RSA keys to current OpenSSH
# (see DEVELOPERS.md). So, unless pkg-config finds a system libssh2 >= 1.11
# (and TPUSH_SYSTEM_LIBSSH2 is ON), tpush links the static 1.11.1 that
# scripts/build-libssh2.sh built into TPUSH_LIBSSH2_DIR, by default
# .deps/libssh2-1.11.1 in the source tree, shared by every build directory
# (normal, sanitizer) so it is built once. Configuring only checks that build
# (`make libssh2` makes it, and `make` runs that first): it never downloads.

set(TPUSH_LIBSSH2_MIN_VERSION 1.11)
set(TPUSH_LIBSSH2_BUNDLED_VERSION 1.11.1)
option(TPUSH_SYSTEM_LIBSSH2 "Use a system libssh2 >= ${TPUSH_LIBSSH2_MIN_VERSION} if pkg-config finds one" ON)
set(TPUSH_LIBSSH2_DIR "${PROJECT_SOURCE_DIR}/.deps/libssh2-${TPUSH_LIBSSH2_BUNDLED_VERSION}"
    CACHE PATH "Where scripts/build-libssh2.sh builds libssh2 ${TPUSH_LIBSSH2_BUNDLED_VERSION}")

if(NOT TARGET OpenSSL::Crypto)
  find_package(OpenSSL 3 REQUIRED)
endif()
if(NOT TARGET Threads::Threads)
  find_package(Threads REQUIRED)
endif()

function(_tpush_libssh2_header_version header out_var)
  file(STRINGS "${header}" _line REGEX "^#define[ \t]+LIBSSH2_VERSION[ \t]+\"[^\"]+\"")
  string(REGEX REPLACE "^#define[ \t]+LIBSSH2_VERSION[ \t]+\"([^\"]+)\".*" "\\1" _version "${_line}")
  set(${out_var} "${_version}" PARENT_SCOPE)
endfunction()

unset(_tpush_libssh2_source)

# --- 1. a system libssh2 that is new enough ------------------------------------
if(TPUSH_SYSTEM_LIBSSH2 AND NOT TARGET tpush::libssh2)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(TPUSH_SYSTEM_LIBSSH2_PC QUIET IMPORTED_TARGET GLOBAL
                      "libssh2>=${TPUSH_LIBSSH2_MIN_VERSION}")
    if(TPUSH_SYSTEM_LIBSSH2_PC_FOUND)
      add_library(tpush::libssh2 INTERFACE IMPORTED GLOBAL)
      target_link_libraries(tpush::libssh2 INTERFACE PkgConfig::TPUSH_SYSTEM_LIBSSH2_PC
                            OpenSSL::Crypto Threads::Threads)
      set(TPUSH_LIBSSH2_VERSION "${TPUSH_SYSTEM_LIBSSH2_PC_VERSION}")
      set(_tpush_libssh2_source "system (pkg-config)")
    endif()
  endif()
endif()

# --- 2. our own static build of 1.11.1 --------------------------------------------
if(NOT TARGET tpush::libssh2)
  set(_script "${PROJECT_SOURCE_DIR}/scripts/build-libssh2.sh")
  # Re-check when the recipe or a patch changes (the build is then stale).
  file(GLOB _patches "${PROJECT_SOURCE_DIR}/scripts/patches/libssh2-*.patch")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_script}" ${_patches})
  find_program(TPUSH_BASH bash REQUIRED)
  execute_process(COMMAND "${TPUSH_BASH}" "${_script}" --check "${TPUSH_LIBSSH2_DIR}"
                  RESULT_VARIABLE _rc ERROR_VARIABLE _why)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR
      "libssh2 ${TPUSH_LIBSSH2_BUNDLED_VERSION}: ${_why}"
      "Build it first: `make libssh2` (or scripts/build-libssh2.sh ${TPUSH_LIBSSH2_DIR}); `make` does this "
      "for you. Or install libssh2 >= ${TPUSH_LIBSSH2_MIN_VERSION} where pkg-config finds it.")
  endif()
  set(_lib "${TPUSH_LIBSSH2_DIR}/lib/libssh2.a")
  set(_inc "${TPUSH_LIBSSH2_DIR}/include")
  if(NOT EXISTS "${_lib}" OR NOT EXISTS "${_inc}/libssh2.h")
    message(FATAL_ERROR "libssh2: ${TPUSH_LIBSSH2_DIR} lacks lib/libssh2.a or include/libssh2.h after "
                        "scripts/build-libssh2.sh; remove that directory and configure again.")
  endif()
  _tpush_libssh2_header_version("${_inc}/libssh2.h" TPUSH_LIBSSH2_VERSION)

  add_library(tpush::libssh2 STATIC IMPORTED GLOBAL)
  set_target_properties(tpush::libssh2 PROPERTIES
    IMPORTED_LOCATION "${_lib}"
    IMPORTED_LINK_INTERFACE_LANGUAGES C
    INTERFACE_INCLUDE_DIRECTORIES "${_inc}"
    INTERFACE_LINK_LIBRARIES "OpenSSL::Crypto;Threads::Threads"
    # scripts/patches/libssh2-hostkey-certificates.patch: certificate host keys
    # can verify a key exchange, so tpush may offer them.
    INTERFACE_COMPILE_DEFINITIONS "TPUSH_LIBSSH2_HOST_CERTIFICATES=1")
  # Plain -I rather than -isystem: -I directories are searched before every
  # -isystem one and before /usr/include, where Debian's libssh2-1-dev may have
  # put the 1.10 header. (IMPORTED_NO_SYSTEM is deprecated from CMake 3.28.)
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.25)
    set_target_properties(tpush::libssh2 PROPERTIES SYSTEM FALSE)
  else()
    set_target_properties(tpush::libssh2 PROPERTIES IMPORTED_NO_SYSTEM TRUE)
  endif()
  set(_tpush_libssh2_source "static build in ${TPUSH_LIBSSH2_DIR}")
endif()

# --- prove it: the header the compiler sees and the library agree, >= 1.11 -------
set(_probe_dir "${CMAKE_BINARY_DIR}/CMakeFiles/tpush-libssh2-probe")
file(WRITE "${_probe_dir}/probe.c" [=[
#include <libssh2.h>
#include <stdio.h>
#if LIBSSH2_VERSION_NUM < 0x010b00
#error "libssh2.h found first is older than 1.11 (the system 1.10 header shadows ours?)"
#endif
int main(void) {
  const char *v = libssh2_version(LIBSSH2_VERSION_NUM);
  if (!v) { printf("header %s but the linked library is older\n", LIBSSH2_VERSION); return 1; }
  printf("%s", v);
  return 0;
}
]=])
try_run(TPUSH_LIBSSH2_PROBE_RUN TPUSH_LIBSSH2_PROBE_COMPILE "${_probe_dir}/build" "${_probe_dir}/probe.c"
        LINK_LIBRARIES tpush::libssh2
        COMPILE_OUTPUT_VARIABLE _probe_compile_out
        RUN_OUTPUT_VARIABLE _probe_run_out)
if(NOT TPUSH_LIBSSH2_PROBE_COMPILE)
  message(FATAL_ERROR "libssh2: a test program using tpush::libssh2 (${_tpush_libssh2_source}) "
                      "did not build:\n${_probe_compile_out}")
endif()
if(NOT TPUSH_LIBSSH2_PROBE_RUN EQUAL 0 OR NOT _probe_run_out STREQUAL TPUSH_LIBSSH2_VERSION)
  message(FATAL_ERROR "libssh2: expected version ${TPUSH_LIBSSH2_VERSION} from ${_tpush_libssh2_source}, "
                      "but a test program reported '${_probe_run_out}' (exit ${TPUSH_LIBSSH2_PROBE_RUN})")
endif()
message(STATUS "libssh2: ${TPUSH_LIBSSH2_VERSION} from ${_tpush_libssh2_source}")
