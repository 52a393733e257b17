# Shared compile settings and the helper that declares one library of the suite.

add_library(fiskai_warnings INTERFACE)
target_compile_options(fiskai_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor -Wimplicit-fallthrough
  # designated initialisers that leave defaulted members out are the intended style
  -Wno-missing-field-initializers
  $<$<BOOL:${FISKAI_WERROR}>:-Werror>)

if(FISKAI_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  # Each of the suite's executables carries every library it links, with its debug info and,
  # under the sanitizers, millions of relative relocations for their descriptors: compressing
  # the linked debug sections and packing the relocations (glibc 2.36, binutils 2.38) nearly
  # halves each executable; the build tree had outgrown a CI machine's free disk at ~19 GB.
  # Link-time only, so compiled objects (and ccache's entries for them) stay as they were.
  add_link_options(-gz -Wl,-z,pack-relative-relocs)
endif()

# fiskai_add_library(<name> SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
# Declares the static library fiskai_<name> with the alias fiskai::<name>, public
# headers under libs/<name>/include, and registers it for install and export.
function(fiskai_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  set(target fiskai_${name})
  add_library(${target} STATIC ${ARG_SOURCES})
  add_library(fiskai::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME fiskai_${name}
    POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_link_libraries(${target} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS} $<BUILD_INTERFACE:fiskai_warnings>)
  set_property(GLOBAL APPEND PROPERTY FISKAI_LIBRARIES ${target})
  set_property(GLOBAL APPEND PROPERTY FISKAI_INCLUDE_DIRS ${CMAKE_CURRENT_SOURCE_DIR}/include)
endfunction()

# fiskai_embed_schemas(<out_var> NAMESPACE <ns> COMMENT <text> FILES <a.json> ...)
# Compiles files of schemas/ into the calling library: a build-time script writes a .cpp
# defining <ns>::embedded_schema_files (each file's name and exact bytes), so an edited
# schema rebuilds the library. <out_var> receives the generated source's path.
function(fiskai_embed_schemas out_var)
  cmake_parse_arguments(ARG "" "NAMESPACE;COMMENT" "FILES" ${ARGN})
  set(schema_paths "")
  foreach(f IN LISTS ARG_FILES)
    list(APPEND schema_paths ${PROJECT_SOURCE_DIR}/schemas/${f})
  endforeach()
  # Commas, not semicolons, on the command line: a shell would split at a semicolon.
  string(REPLACE ";" "," file_arg "${ARG_FILES}")
  set(embedded ${CMAKE_CURRENT_BINARY_DIR}/embedded_schemas.cpp)
  add_custom_command(OUTPUT ${embedded}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${embedded} -DSCHEMA_DIR=${PROJECT_SOURCE_DIR}/schemas
            -DFILES=${file_arg} -DNAMESPACE=${ARG_NAMESPACE}
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_schemas.cmake
    DEPENDS ${schema_paths} ${PROJECT_SOURCE_DIR}/cmake/embed_schemas.cmake
    COMMENT "${ARG_COMMENT}"
    VERBATIM)
  set(${out_var} ${embedded} PARENT_SCOPE)
endfunction()
