# Shell completions are generated at build time by asking each tool for its
# own option table (`<tool> --print-completion bash|zsh`), so they always
# list exactly the options the binary accepts.
set(FABRIC_COMPLETION_DIR ${PROJECT_BINARY_DIR}/completions)

function(fabric_add_completions tool)
  set(bash ${FABRIC_COMPLETION_DIR}/bash/${tool})
  set(zsh ${FABRIC_COMPLETION_DIR}/zsh/_${tool})
  add_custom_command(TARGET ${tool} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -E make_directory ${FABRIC_COMPLETION_DIR}/bash ${FABRIC_COMPLETION_DIR}/zsh
    COMMAND $<TARGET_FILE:${tool}> --print-completion bash > ${bash}.tmp
    COMMAND ${CMAKE_COMMAND} -E rename ${bash}.tmp ${bash}
    COMMAND $<TARGET_FILE:${tool}> --print-completion zsh > ${zsh}.tmp
    COMMAND ${CMAKE_COMMAND} -E rename ${zsh}.tmp ${zsh}
    COMMENT "Generating shell completions for ${tool}"
    VERBATIM)
  install(FILES ${bash} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
  install(FILES ${zsh} DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
endfunction()
