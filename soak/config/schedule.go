package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// scheduleHelp ends every schedule error: what a schedule may be.
const scheduleHelp = "(five cron fields, @daily, @every 6h)"

// newCronParser accepts five cron fields and the @descriptors.
func newCronParser() cron.Parser {
	return cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
}

// cronFields are the five fields' names and bounds, in order.
var cronFields = [5]struct {
	name   string
	lo, hi int
}{{"minute", 0, 59}, {"hour", 0, 23}, {"day of month", 1, 31}, {"month", 1, 12}, {"day of week", 0, 6}}

// CronSchedule parses the job's schedule in its timezone.
func (j *Job) CronSchedule() (cron.Schedule, error) {
	if err := checkSchedule(j.Schedule); err != nil {
		return nil, fmt.Errorf("job %s: schedule: %w", j.Name, err)
	}
	loc, err := loadLocation(j.Timezone)
	if err != nil {
		return nil, fmt.Errorf("job %s: timezone: %w", j.Name, err)
	}
	spec := j.Schedule
	if loc != time.Local {
		spec = "CRON_TZ=" + loc.String() + " " + spec
	}
	s, err := newCronParser().Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("job %s: schedule %q: %w", j.Name, j.Schedule, err)
	}
	return s, nil
}

// Location returns the job's timezone.
func (j *Job) Location() (*time.Location, error) { return loadLocation(j.Timezone) }

func loadLocation(tz string) (*time.Location, error) {
	if tz == "" || tz == "Local" {
		return time.Local, nil
	}
	return time.LoadLocation(tz)
}

// checkSchedule explains what is wrong with a schedule: which field, which
// value, which range.
func checkSchedule(s string) error {
	switch {
	case s == "":
		return errors.New("required " + scheduleHelp)
	case strings.TrimSpace(s) == "":
		return errors.New("blank: leave schedule out for a job that runs only on request (the API, the web page, soakd run --daemon), or give one " + scheduleHelp)
	case strings.HasPrefix(s, "TZ=") || strings.HasPrefix(s, "CRON_TZ="):
		return fmt.Errorf("%q: set timezone: instead of a TZ= prefix", s)
	case strings.HasPrefix(s, "@every "):
		d, err := time.ParseDuration(strings.TrimSpace(strings.TrimPrefix(s, "@every ")))
		if err != nil || d < time.Second {
			return fmt.Errorf("%q: @every needs a duration of at least 1s, such as @every 6h", s)
		}
		return nil
	case strings.HasPrefix(s, "@"):
		if _, err := newCronParser().Parse(s); err != nil {
			return fmt.Errorf("%q: unknown descriptor: want @yearly, @monthly, @weekly, @daily, @hourly or @every DURATION", s)
		}
		return nil
	}
	fields := strings.Fields(s)
	if len(fields) != 5 {
		return fmt.Errorf("%q: want five fields (minute hour day-of-month month day-of-week), got %d %s", s, len(fields), scheduleHelp)
	}
	for i, f := range fields {
		if err := checkCronField(i, f); err != nil {
			return fmt.Errorf("%q: %v %s", s, err, scheduleHelp)
		}
	}
	if _, err := newCronParser().Parse(s); err != nil {
		return fmt.Errorf("%q: %v %s", s, err, scheduleHelp)
	}
	return nil
}

// checkCronField checks field i alone: first the bounds of its numbers,
// then the cron parser's view of it.
func checkCronField(i int, f string) error {
	fd := cronFields[i]
	for _, part := range strings.Split(f, ",") {
		rng, _, _ := strings.Cut(part, "/")
		for _, num := range strings.Split(rng, "-") {
			n, err := strconv.Atoi(num)
			if err == nil && (n < fd.lo || n > fd.hi) {
				return fmt.Errorf("%s %d out of range %d-%d", fd.name, n, fd.lo, fd.hi)
			}
		}
	}
	spec := []string{"*", "*", "*", "*", "*"}
	spec[i] = f
	if _, err := newCronParser().Parse(strings.Join(spec, " ")); err != nil {
		return fmt.Errorf("%s %q: %v", fd.name, f, err)
	}
	return nil
}
