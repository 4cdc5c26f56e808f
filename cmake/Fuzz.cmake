# libFuzzer targets (tests/fuzz/*.cpp), one per kind of input tpush parses.
# Built with clang only, in a directory of their own (`make fuzz` uses build-fuzz/):
#
#   CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -DTPUSH_FUZZ=ON -DBUILD_TESTING=OFF
#   cmake --build build-fuzz --target fuzz_targets
#
# The parsers the targets reach are compiled once more into tpush_fuzz_parsers with
# coverage instrumentation (-fsanitize=fuzzer-no-link) and ASan + UBSan; the rest of
# tpush_core is not needed. libssh2 and OpenSSL are linked as they are.
option(TPUSH_FUZZ "Build the libFuzzer targets in tests/fuzz (clang only)" OFF)
if(NOT TPUSH_FUZZ)
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "TPUSH_FUZZ needs clang (configure with CC=clang-14 CXX=clang++-14)")
endif()

set(TPUSH_FUZZ_SANITIZE "address,undefined" CACHE STRING "Sanitizers the fuzz targets run under")
set(TPUSH_FUZZ_TARGETS host_list hosts_file known_hosts gcloud_json private_key wire
    line_output ssh_config relay_report unified_diff agent_conversation)

# Only the parsers and what they call.
set(TPUSH_FUZZ_SOURCES
  src/inventory/host_list.cpp src/inventory/host_pattern.cpp src/inventory/host_groups.cpp
  src/inventory/hosts_file.cpp src/inventory/host_set.cpp src/inventory/host_filter.cpp
  src/inventory/node_set.cpp
  src/inventory/tpu_describe.cpp src/inventory/tpu_queued_resource.cpp
  src/inventory/tpu_host_keys.cpp src/inventory/gcloud.cpp
  src/ssh/identity/known_hosts.cpp src/ssh/wire.cpp src/ssh/identity/signing_key.cpp
  src/ssh/identity/user_certificate.cpp src/ssh/identity/certificate.cpp
  src/ssh/agent/protocol.cpp src/ssh/agent/server.cpp src/ssh/agent/client.cpp src/ssh/identity/signature_check.cpp
  src/ssh_config/config.cpp src/ssh_config/jump.cpp src/ssh_config/keywords.cpp
  src/ssh_config/line.cpp src/ssh_config/match.cpp src/ssh_config/parse.cpp
  src/ssh_config/tokens.cpp src/ssh_config/values.cpp
  src/output/line_splitter.cpp src/output/line_output.cpp src/output/writer.cpp
  src/output/terminal_text.cpp src/output/unified_diff.cpp
  src/util/base64.cpp src/util/string.cpp src/util/pattern.cpp src/util/file.cpp src/util/child_process.cpp
  src/util/environment.cpp src/util/shell_quote.cpp src/util/signals.cpp
  src/relay/relay_script.cpp)
list(TRANSFORM TPUSH_FUZZ_SOURCES PREPEND ${PROJECT_SOURCE_DIR}/)

set(tpush_fuzz_flags -fsanitize=${TPUSH_FUZZ_SANITIZE} -fno-sanitize-recover=all
    -fno-omit-frame-pointer -g)
add_library(tpush_fuzz_parsers STATIC ${TPUSH_FUZZ_SOURCES})
tpush_use_scripts(tpush_fuzz_parsers)  # relay_script.cpp sends relay_control.sh
target_include_directories(tpush_fuzz_parsers PUBLIC ${PROJECT_SOURCE_DIR}/include)
target_compile_definitions(tpush_fuzz_parsers PUBLIC TPUSH_VERSION="${PROJECT_VERSION}"
  SPDLOG_FMT_EXTERNAL)
target_compile_options(tpush_fuzz_parsers PRIVATE -fsanitize=fuzzer-no-link ${tpush_fuzz_flags})
target_link_libraries(tpush_fuzz_parsers
  PUBLIC tpush_options tpush::libssh2 OpenSSL::Crypto spdlog::spdlog nlohmann_json::nlohmann_json
         Boost::headers Boost::filesystem Threads::Threads)

add_custom_target(fuzz_targets)
foreach(name IN LISTS TPUSH_FUZZ_TARGETS)
  add_executable(fuzz_${name} ${PROJECT_SOURCE_DIR}/tests/fuzz/${name}.cpp)
  target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer ${tpush_fuzz_flags})
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer ${tpush_fuzz_flags})
  target_link_libraries(fuzz_${name} PRIVATE tpush_fuzz_parsers)
  add_dependencies(fuzz_targets fuzz_${name})
endforeach()
message(STATUS "tpush fuzz targets (${TPUSH_FUZZ_SANITIZE}): ${TPUSH_FUZZ_TARGETS}")
