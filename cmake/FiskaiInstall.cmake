include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

get_property(fiskai_libraries GLOBAL PROPERTY FISKAI_LIBRARIES)
get_property(fiskai_include_dirs GLOBAL PROPERTY FISKAI_INCLUDE_DIRS)

install(TARGETS ${fiskai_libraries} EXPORT fiskaiTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(dir IN LISTS fiskai_include_dirs)
  install(DIRECTORY ${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
install(EXPORT fiskaiTargets NAMESPACE fiskai:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fiskai)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/schemas/ DESTINATION ${CMAKE_INSTALL_DATADIR}/fiskai/schemas)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/fiskaiConfig.cmake.in
  ${PROJECT_BINARY_DIR}/fiskaiConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fiskai)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/fiskaiConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/fiskaiConfig.cmake ${PROJECT_BINARY_DIR}/fiskaiConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fiskai)
