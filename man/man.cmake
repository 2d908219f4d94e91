# Man pages are written by hand in man/<tool>.1 and installed to section 1.
function(fabric_add_man_page tool)
  set(page ${PROJECT_SOURCE_DIR}/man/${tool}.1)
  if(EXISTS ${page})
    install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  endif()
endfunction()
