# The shell scripts tpush sends to workers, embedded at build time.
#
# Each script is a file src/<folder>/[<sub>/]NAME.sh beside the C++ that sends
# it. The build turns it into a header of the build tree,
#
#   <build>/generated/include/tpush/<folder>/[<sub>/]NAME_sh.h
#
# which holds `inline constexpr std::string_view NAME_sh` in namespace
# tpush::<folder>: the file's bytes after its leading comment lines (the #! line,
# what the script is for, file-wide shellcheck directives), less any later line
# that holds only a shellcheck directive (`# shellcheck disable=SC2086 # why`,
# before the one command it is about). Those are for readers and shellcheck,
# never sent; everything else from the first line that does not start with '#'
# is sent as it is, up to and including the file's last newline. Nothing
# generated is committed; a changed .sh makes its header again, and the files
# that include it compile again.
#
#   tpush_use_scripts(TARGET)   TARGET may include those headers, and they are
#                               made before it compiles
#
# tests/check_scripts.py (CTest: check_scripts_syntax, check_scripts_shellcheck)
# runs bash -n and shellcheck on the same files.
#
# The build runs this file again in script mode to write one header:
#   cmake -DSCRIPT=FILE.sh -DSOURCE=src/F/FILE.sh -DHEADER=OUT.h -DNAMESPACE=tpush::F
#         -DNAME=FILE_sh -P cmake/EmbedScripts.cmake

if(CMAKE_SCRIPT_MODE_FILE)
  file(READ "${SCRIPT}" text)
  string(REGEX MATCH "^(#[^\n]*\n)*" comments "${text}")
  string(LENGTH "${comments}" skip)
  string(SUBSTRING "${text}" ${skip} -1 body)
  # The body never starts with '#', so a directive's line always follows a newline.
  string(REGEX REPLACE "\n([ \t]*# shellcheck [^\n]*\n)+" "\n" body "${body}")
  if(body STREQUAL "")
    message(FATAL_ERROR "${SOURCE}: nothing after the leading comment lines")
  endif()
  # Printable ASCII, tabs and newlines only: what the raw string below holds
  # byte for byte, whatever the compiler's source character set.
  if(body MATCHES "[^\t\n -~]")
    message(FATAL_ERROR "${SOURCE}: a byte other than printable ASCII, tab or newline")
  endif()
  if(body MATCHES "\\)tpush_sh\"")
    message(FATAL_ERROR "${SOURCE}: holds )tpush_sh\", which would end the raw string it is embedded in")
  endif()
  file(WRITE "${HEADER}" "// Made by cmake/EmbedScripts.cmake from ${SOURCE}: edit that file instead.
#pragma once

#include <string_view>

namespace ${NAMESPACE} {

inline constexpr std::string_view ${NAME} = R\"tpush_sh(${body})tpush_sh\";

}  // namespace ${NAMESPACE}
")
  return()
endif()

set(TPUSH_SCRIPTS_INCLUDE_DIR ${PROJECT_BINARY_DIR}/generated/include)
file(GLOB_RECURSE TPUSH_SCRIPTS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/*.sh)
set(tpush_script_headers)
foreach(script IN LISTS TPUSH_SCRIPTS)
  get_filename_component(name ${script} NAME_WLE)
  get_filename_component(dir ${script} DIRECTORY)
  file(RELATIVE_PATH dir ${PROJECT_SOURCE_DIR}/src ${dir})  # commands, or commands/process
  string(REGEX REPLACE "/.*" "" folder "${dir}")             # the layer, which names the namespace
  file(RELATIVE_PATH source ${PROJECT_SOURCE_DIR} ${script})
  if(NOT name MATCHES "^[a-z][a-z0-9_]*$")
    message(FATAL_ERROR "${source}: name a script in lower case, digits and '_' (it becomes ${name}_sh in C++)")
  endif()
  set(header ${TPUSH_SCRIPTS_INCLUDE_DIR}/tpush/${dir}/${name}_sh.h)
  add_custom_command(OUTPUT ${header}
    COMMAND ${CMAKE_COMMAND} -DSCRIPT=${script} -DSOURCE=${source} -DHEADER=${header}
            -DNAMESPACE=tpush::${folder} -DNAME=${name}_sh -P ${CMAKE_CURRENT_LIST_FILE}
    DEPENDS ${script} ${CMAKE_CURRENT_LIST_FILE}
    COMMENT "Embedding ${source}"
    VERBATIM)
  list(APPEND tpush_script_headers ${header})
endforeach()
# One target makes the headers, so that targets compiled side by side (tpush_core,
# the fuzz build's parsers) never write the same header at once.
add_custom_target(tpush_scripts DEPENDS ${tpush_script_headers})

function(tpush_use_scripts target)
  target_include_directories(${target} PRIVATE ${TPUSH_SCRIPTS_INCLUDE_DIR})
  add_dependencies(${target} tpush_scripts)
endfunction()
