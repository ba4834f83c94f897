#!/bin/sh
# Emulated desktop owner (test pool only): prints OwnerActive for this startd from a schedule file
# whose lines are "LOGIN LOGOUT" unix times. IS_OWNER and PREEMPT use the attribute.
now=$(date +%s)
active=false
if [ -r "$1" ]; then
    while read -r login logout; do
        if [ -n "$logout" ] && [ "$now" -ge "$login" ] && [ "$now" -lt "$logout" ]; then
            active=true
        fi
    done < "$1"
fi
echo "OwnerActive = $active"
