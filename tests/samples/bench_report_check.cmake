# Reads the benchmark report's JSON (cmake -DJSON=FILE -P bench_report_check.cmake): it must
# parse, hold one result with positive memory figures per character, and a crowd of four
# characters that takes more memory, resident and allocated, than one character does.
file(READ "${JSON}" text)
string(JSON results ERROR_VARIABLE error LENGTH "${text}" results)
if(error)
  message(FATAL_ERROR "${JSON}: ${error}")
endif()
if(NOT results EQUAL 1)
  message(FATAL_ERROR "${JSON}: ${results} results, expected 1")
endif()
string(JSON resident GET "${text}" results 0 resident_bytes_per_character)
string(JSON allocated GET "${text}" results 0 allocated_bytes_per_character)
string(JSON crowd GET "${text}" crowd characters)
string(JSON crowd_resident GET "${text}" crowd characters_resident_bytes)
string(JSON crowd_allocated GET "${text}" crowd characters_allocated_bytes)
if(NOT resident GREATER 0 OR NOT allocated GREATER 0)
  message(FATAL_ERROR "memory per character: ${resident} resident, ${allocated} allocated")
endif()
if(NOT crowd EQUAL 4 OR NOT crowd_resident GREATER resident OR
   NOT crowd_allocated GREATER allocated)
  message(FATAL_ERROR "memory of ${crowd} characters: ${crowd_resident} resident, "
          "${crowd_allocated} allocated; one: ${resident}, ${allocated}")
endif()
message(STATUS "memory: one character ${resident} bytes resident (${allocated} allocated), "
        "${crowd} characters ${crowd_resident} (${crowd_allocated})")
