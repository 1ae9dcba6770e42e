#!/bin/sh
# The exporter's unprivileged user, and the rdma group that may be given
# the umad devices (ibtool-exporter.service).
set -e
getent group rdma >/dev/null || groupadd --system rdma
getent passwd ibtool-exporter >/dev/null ||
	useradd --system --user-group --no-create-home --home-dir /nonexistent \
		--shell /usr/sbin/nologin --comment "ibtool-exporter" ibtool-exporter
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
exit 0
