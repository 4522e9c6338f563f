# Part of `cmake --install` (install(SCRIPT) in CMakeLists.txt): writes the
# units to install, with the paths of this installation in place of
# /usr/sbin/trace2d and /usr/share/doc/trace2d. CMAKE_INSTALL_PREFIX is the
# prefix being installed to; the TRACE2D_UNIT_* variables come from the
# install(CODE) before.
foreach(_var SBINDIR DOCDIR)
  set(_dir "${TRACE2D_UNIT_${_var}}")
  if(NOT IS_ABSOLUTE "${_dir}")
    set(_dir "${CMAKE_INSTALL_PREFIX}/${_dir}")
  endif()
  set(_full_${_var} "${_dir}")
endforeach()
foreach(_unit trace2d.service trace2d.socket)
  file(READ "${TRACE2D_UNIT_SOURCE_DIR}/${_unit}" _text)
  string(REPLACE "/usr/sbin/trace2d" "${_full_SBINDIR}/trace2d" _text "${_text}")
  string(REPLACE "/usr/share/doc/trace2d" "${_full_DOCDIR}" _text "${_text}")
  file(CONFIGURE OUTPUT "${TRACE2D_UNIT_OUTPUT_DIR}/${_unit}" CONTENT "${_text}" @ONLY)
endforeach()
