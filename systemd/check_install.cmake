# ctest systemd.install_tree: `cmake --install` into an empty staging root
# (DESTDIR, so that no file can land outside it whatever its destination),
# then checks that every part is where the FHS and systemd look for it.
#
#   cmake -D BUILD_DIR=<build> -D WORK_DIR=<scratch> -D PREFIX=<prefix>
#         -D UNIT_DIR=... -D SYSUSERS_DIR=... -D TMPFILES_DIR=... -D DOC_DIR=...
#         -D SBIN_DIR=... -D BIN_DIR=... -D SYSCONF_FILE=... -P check_install.cmake
foreach(_var BUILD_DIR WORK_DIR PREFIX UNIT_DIR SYSUSERS_DIR TMPFILES_DIR DOC_DIR SBIN_DIR BIN_DIR SYSCONF_FILE)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "check_install.cmake: -D ${_var}=... is missing")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(_root "${WORK_DIR}/root")
set(ENV{DESTDIR} "${_root}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
message("${_out}${_err}")
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${_rc})")
endif()

# Destinations are either absolute or relative to the prefix.
function(staged out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${_root}${dir}" PARENT_SCOPE)
  else()
    set(${out} "${_root}${PREFIX}/${dir}" PARENT_SCOPE)
  endif()
endfunction()

staged(_sbin "${SBIN_DIR}")
staged(_bin "${BIN_DIR}")
staged(_units "${UNIT_DIR}")
staged(_sysusers "${SYSUSERS_DIR}")
staged(_tmpfiles "${TMPFILES_DIR}")
staged(_docs "${DOC_DIR}")
set(_expected
    "${_sbin}/trace2d" "${_bin}/trace2ctl"
    "${_units}/trace2d.service" "${_units}/trace2d.socket"
    "${_sysusers}/trace2d.conf" "${_tmpfiles}/trace2d.conf"
    "${_docs}/README.md" "${_docs}/systemd.md" "${_docs}/architecture.md" "${_docs}/schema.md"
    "${_docs}/examples/trace2d.toml" "${_docs}/examples/trace2d.service.d/network.conf"
    "${_docs}/trace2ctl.md"
    # Man pages (docs/CMakeLists.txt) and trace2ctl's shell completion.
    "${_root}${PREFIX}/share/man/man1/trace2ctl.1" "${_root}${PREFIX}/share/man/man5/trace2d.toml.5"
    "${_root}${PREFIX}/share/man/man8/trace2d.8"
    "${_root}${PREFIX}/share/bash-completion/completions/trace2ctl"
    "${_root}${PREFIX}/share/zsh/site-functions/_trace2ctl"
    # The configuration file, in the sysconfdir of the prefix: /etc for /usr.
    "${_root}${SYSCONF_FILE}")
set(_missing "")
foreach(_file IN LISTS _expected)
  if(NOT EXISTS "${_file}")
    list(APPEND _missing "${_file}")
  endif()
endforeach()
foreach(_program "${_sbin}/trace2d" "${_bin}/trace2ctl")
  # if(IS_EXECUTABLE) needs CMake 3.29; the project requires 3.25.
  execute_process(COMMAND test -x "${_program}" RESULT_VARIABLE _not_executable)
  if(EXISTS "${_program}" AND _not_executable)
    list(APPEND _missing "${_program} (not executable)")
  endif()
endforeach()

# The installed unit starts the installed daemon.
if(EXISTS "${_units}/trace2d.service")
  file(STRINGS "${_units}/trace2d.service" _exec REGEX "^ExecStart=")
  staged(_expected_exec "${SBIN_DIR}")
  string(REPLACE "${_root}" "" _expected_exec "${_expected_exec}/trace2d")
  if(NOT _exec STREQUAL "ExecStart=${_expected_exec}")
    list(APPEND _missing "trace2d.service: '${_exec}', expected 'ExecStart=${_expected_exec}'")
  endif()
endif()

file(GLOB_RECURSE _tree LIST_DIRECTORIES false RELATIVE "${_root}" "${_root}/*")
list(SORT _tree)
list(JOIN _tree "\n  " _listing)
message("installed under ${_root}:\n  ${_listing}")
if(_missing)
  list(JOIN _missing "\n  " _report)
  message(FATAL_ERROR "missing or wrong:\n  ${_report}")
endif()
