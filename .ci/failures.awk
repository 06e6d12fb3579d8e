# failures.awk prints, from the output of `go test -v` over several
# packages, each failed test's own lines: under -v a test's log comes
# before its "--- FAIL" line, and parallel tests interleave, marked by
# "=== RUN", "=== CONT" and "=== NAME" lines that say whose output follows.
# At most 80 lines a test.
function flush(   i, name, n) {
	for (i = 1; i <= nfailed; i++) {
		name = failed[i]
		if (name in hasChild) continue # its failed subtests say why
		print "==== " pkg " " name
		n = count[name]
		if (n > 80) {
			for (j = 1; j <= 40; j++) print lines[name, j]
			print "    [... " n - 80 " lines left out: see the full log ...]"
			for (j = n - 39; j <= n; j++) print lines[name, j]
		} else {
			for (j = 1; j <= n; j++) print lines[name, j]
		}
		print failLine[name]
	}
	delete lines; delete count; delete failLine; delete failed; delete hasChild
	nfailed = 0; cur = ""
}
/^=== (RUN|CONT|NAME) / { cur = $3; next }
/^=== PAUSE / { next }
/^ *--- FAIL: / {
	name = $3
	failed[++nfailed] = name
	failLine[name] = $0
	parent = name
	while (sub(/\/[^\/]*$/, "", parent)) hasChild[parent] = 1
	next
}
/^ *--- (PASS|SKIP): / { next }
/^(ok|FAIL|\?) *\t/ { pkg = $2; flush(); next }
/^(PASS|FAIL)$/ { next }
cur != "" { lines[cur, ++count[cur]] = $0 }
