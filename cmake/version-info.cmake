# Writes OUT: the version and the git commit the programs report (--version,
# the start-up log line, karpenter_build_info). Run at every build; the file
# changes (and version.c recompiles) only when the commit does. Where there is
# no git checkout (an image build from a copied tree), KP_COMMIT from the
# environment names the commit, else "unknown".
set(commit "$ENV{KP_COMMIT}")
if(commit STREQUAL "")
  execute_process(COMMAND git -C "${SRC}" rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE rc ERROR_QUIET)
  if(NOT rc EQUAL 0 OR commit STREQUAL "")
    set(commit "unknown")
  endif()
endif()
set(text "#define KP_VERSION_STRING \"${VERSION}\"\n#define KP_COMMIT_STRING \"${commit}\"\n")
file(WRITE "${OUT}.tmp" "${text}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
file(REMOVE "${OUT}.tmp")
