/**
 * The most values an `__in` list filter takes (django-filter's `BaseInFilter`, e.g.
 * `?task__in=<id>,<id>`). The server reads them from one JSON parameter (D1 binds at most 100
 * parameters a statement), and a page asking for a whole day splits its tasks by this many.
 */
export const IN_FILTER_MAX = 100;
