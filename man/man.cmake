# Man pages are written by hand in man/<tool>.1 and installed to section 1.
# What --timeout bounds is said once, in man/timeout.roff: a page's line
# @TIMEOUT_PARAGRAPH@ is replaced by it in the copy that is installed.
# The exit statuses every tool shares are said once too, in
# man/exit-common.roff, in place of a page's line @EXIT_STATUS_COMMON@.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/man/timeout.roff ${PROJECT_SOURCE_DIR}/man/exit-common.roff)
file(READ ${PROJECT_SOURCE_DIR}/man/timeout.roff TIMEOUT_PARAGRAPH)
string(STRIP "${TIMEOUT_PARAGRAPH}" TIMEOUT_PARAGRAPH)
file(READ ${PROJECT_SOURCE_DIR}/man/exit-common.roff EXIT_STATUS_COMMON)
string(STRIP "${EXIT_STATUS_COMMON}" EXIT_STATUS_COMMON)

function(fabric_add_man_page tool)
  set(page ${PROJECT_SOURCE_DIR}/man/${tool}.1)
  if(EXISTS ${page})
    set(built ${PROJECT_BINARY_DIR}/man/${tool}.1)
    configure_file(${page} ${built} @ONLY)
    install(FILES ${built} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  endif()
endfunction()
