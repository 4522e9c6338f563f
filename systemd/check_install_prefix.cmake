# ctest systemd.install_stays_in_its_prefix: `cmake --install --prefix DIR`,
# without DESTDIR, as someone trying the client library in a temporary
# prefix runs it, must write nothing outside DIR (issue: it used to put
# /etc/trace2d/trace2d.toml on the host, which every later trace2d read).
#
# Where the machine allows it (root, mount namespaces), the install runs
# with /etc, /usr and /var as overlays whose changes are kept aside and
# checked to be empty: that catches a write by any means. Elsewhere, the
# files the install names and the configuration file's place are checked.
#
#   cmake -D BUILD_DIR=<build> -D WORK_DIR=<scratch> -P check_install_prefix.cmake
foreach(_var BUILD_DIR WORK_DIR)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "check_install_prefix.cmake: -D ${_var}=... is missing")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/prefix")
set(_prefix "${WORK_DIR}/prefix")
unset(ENV{DESTDIR})
set(_install "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${_prefix}")

set(_watched etc usr var)
set(_staged FALSE)
execute_process(COMMAND id -u OUTPUT_VARIABLE _uid OUTPUT_STRIP_TRAILING_WHITESPACE)
if(_uid STREQUAL "0" AND EXISTS /usr/bin/unshare)
  # Each watched directory gets an overlay whose upper layer collects what
  # the install writes there; the overlays vanish with the namespace.
  set(_script "set -e\nmount -t tmpfs none \"$0\"\n")
  foreach(_dir IN LISTS _watched)
    string(APPEND _script "mkdir \"$0\"/${_dir}-up \"$0\"/${_dir}-work\n"
           "mount -t overlay overlay -o lowerdir=/${_dir},upperdir=\"$0\"/${_dir}-up,workdir=\"$0\"/${_dir}-work /${_dir}\n")
  endforeach()
  string(APPEND _script "\"$@\"\n")
  foreach(_dir IN LISTS _watched)
    # What the install left in each overlay, listed before it vanishes.
    string(APPEND _script "echo \"written in /${_dir}:\"\n"
           "find \"$0\"/${_dir}-up -mindepth 1 -printf '/${_dir}/%P\\n' | sort\n")
  endforeach()
  file(MAKE_DIRECTORY "${WORK_DIR}/ns")
  # Can this machine mount the overlays at all (a container may forbid it)?
  execute_process(COMMAND /usr/bin/unshare --mount --propagation private sh -c "${_script}" "${WORK_DIR}/ns" true
                  RESULT_VARIABLE _can_unshare OUTPUT_QUIET ERROR_QUIET)
  if(_can_unshare EQUAL 0)
    set(_staged TRUE)
    execute_process(COMMAND /usr/bin/unshare --mount --propagation private sh -c "${_script}"
                            "${WORK_DIR}/ns" ${_install}
                    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  endif()
endif()
if(NOT _staged)
  message("no mount namespace here (not root, or not allowed): checking the files the install names only")
  execute_process(COMMAND ${_install} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
endif()
message("${_out}${_err}")
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "cmake --install --prefix ${_prefix} failed (${_rc})")
endif()

set(_wrong "")
if(_staged)
  # Outside the prefix: what is neither in it nor one of its parent
  # directories (the overlay copies those up when the prefix lies under a
  # watched directory).
  string(REGEX MATCHALL "(^|\n)/[^\n]*" _written "${_out}")
  foreach(_path IN LISTS _written)
    string(STRIP "${_path}" _path)
    string(FIND "${_prefix}/" "${_path}/" _parent_of_prefix)
    string(FIND "${_path}/" "${_prefix}/" _inside_prefix)
    if(NOT _parent_of_prefix EQUAL 0 AND NOT _inside_prefix EQUAL 0)
      list(APPEND _wrong "${_path} (written outside the prefix)")
    endif()
  endforeach()
endif()

# Every file this install says it wrote is under the prefix. Its own output,
# not the build directory's install_manifest.txt: another install of the same
# build directory may have rewritten that meanwhile.
string(REGEX MATCHALL "-- (Installing|Up-to-date): [^\n]*" _installed "${_out}")
if(NOT _installed)
  list(APPEND _wrong "(the install named no file it wrote)")
endif()
foreach(_line IN LISTS _installed)
  string(REGEX REPLACE "^-- [^:]*: " "" _file "${_line}")
  string(FIND "${_file}" "${_prefix}/" _at)
  if(NOT _at EQUAL 0)
    list(APPEND _wrong "${_file} (installed outside the prefix)")
  endif()
endforeach()
# The configuration file is the prefix's own.
if(NOT EXISTS "${_prefix}/etc/trace2d/trace2d.toml")
  list(APPEND _wrong "${_prefix}/etc/trace2d/trace2d.toml (missing)")
endif()
if(_wrong)
  list(JOIN _wrong "\n  " _report)
  message(FATAL_ERROR "cmake --install --prefix ${_prefix} wrote outside it:\n  ${_report}")
endif()
message("everything under ${_prefix}")
