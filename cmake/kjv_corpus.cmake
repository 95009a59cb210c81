# Writes the text task's default corpus: the King James Bible from Debian's bible-kjv, every verse
# on its own line (-l with a width no verse reaches) without its number, chapters under their
# headings ("Genesis 1"). Run by the build (CMakeLists.txt) with -DBIBLE=<the bible program>
# -DOUT=<the file>; the file is written whole or not at all.
execute_process(
  COMMAND ${BIBLE} -l100000 gen1:1-rev22:21
  OUTPUT_VARIABLE text
  RESULT_VARIABLE status
  ERROR_VARIABLE error)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${BIBLE} failed (${status}): ${error}")
endif()
string(REGEX REPLACE "\n +[0-9]+ " "\n" text "${text}")
string(LENGTH "${text}" bytes)
if(bytes LESS 4000000)
  message(FATAL_ERROR "${BIBLE} wrote ${bytes} bytes; the whole Bible is about 4.15 MB")
endif()
file(WRITE "${OUT}.tmp" "${text}")
file(RENAME "${OUT}.tmp" "${OUT}")
