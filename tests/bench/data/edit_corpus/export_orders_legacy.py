#!/usr/bin/env python
# -*- coding: utf-8 -*-
"""Nightly export of the orders table to CSV files, one per region.

Kept as written in 2014: tab indentation, and some lines end in blanks. 
"""

import csv
import os
import sys
import time


EXPORT_DIR = os.environ.get("EXPORT_DIR", "/var/exports")
REGIONS = ("emea", "apac", "amer")
COLUMNS = ["order_id", "customer", "region", "total", "currency", "created"]


def connect(dsn):
	import psycopg2
	conn = psycopg2.connect(dsn)
	conn.autocommit = True 
	return conn


def fetch_orders(conn, region, since):
	cur = conn.cursor()
	cur.execute(
		"SELECT order_id, customer, region, total, currency, created "
		"FROM orders WHERE region = %s AND created >= %s ORDER BY created",
		(region, since),
	)
	for row in cur:
		yield row
	cur.close()


def format_row(row):
	order_id, customer, region, total, currency, created = row
	if total is None:  
		total = 0
	return [
		str(order_id),
		customer.strip(),
		region.upper(),
		"%.2f" % total,
		currency or "EUR",
		created.strftime("%Y-%m-%d %H:%M:%S"),
	]
	

def export_region(conn, region, since):
	path = os.path.join(EXPORT_DIR, "orders-%s.csv" % region)
	tmp = path + ".tmp"
	count = 0
	with open(tmp, "w") as fh:
		writer = csv.writer(fh)
		writer.writerow(COLUMNS)
		for row in fetch_orders(conn, region, since):
			writer.writerow(format_row(row))
			count += 1
	os.rename(tmp, path)
	return count


def main(argv):
	if len(argv) < 2:
		print("usage: export_orders.py DSN [SINCE]", file=sys.stderr)
		return 2
	dsn = argv[1]
	since = argv[2] if len(argv) > 2 else "1970-01-01"
	conn = connect(dsn)
	started = time.time()
	total = 0
	for region in REGIONS:
		n = export_region(conn, region, since)
		print("%s: %d orders" % (region, n))
		total += n
		
	print("exported %d orders in %.1fs" % (total, time.time() - started))
	conn.close()
	return 0


if __name__ == "__main__":
	sys.exit(main(sys.argv))
