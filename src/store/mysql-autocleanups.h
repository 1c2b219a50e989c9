/* mysql-autocleanups.h - g_autoptr() for MariaDB Connector/C's types.
 *
 * The connector predates GLib's cleanup macros; declaring them here once
 * lets every module of the store say who frees. Only the store speaks
 * MySQL, so only the store's layer (and, until they go through the store's
 * own functions, the layers above it) includes this. */
#pragma once
#include <glib.h>
#include <mysql.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MYSQL_RES, mysql_free_result)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MYSQL_STMT, mysql_stmt_close)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MYSQL, mysql_close)
