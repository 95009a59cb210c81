# Writes OUT, a .cpp defining `const char* lenlab::NAME()` returning the text of IN, so the binary
# carries the checked-in file (the paper's experiment config) wherever it is copied to.
file(READ "${IN}" text)
if(text MATCHES "\\)lenlab_embed\"")
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )lenlab_embed\"")
endif()
file(WRITE "${OUT}.tmp" "// Generated from ${IN} by cmake/embed_text.cmake: do not edit.\nnamespace lenlab {\nconst char* ${NAME}() {\n  return R\"lenlab_embed(${text})lenlab_embed\";\n}\n}  // namespace lenlab\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
