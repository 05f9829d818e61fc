/* top_json: the document: render_json's, and "top" (docs/status-json.md). */
#include "top/top_json.h"

#include "app/render_json.h"

json_t *top_json(const struct top *t)
{
    json_t *doc = render_json(&t->snap), *rows = json_array();
    if (!doc || !rows) {
        json_decref(doc);
        json_decref(rows);
        return NULL;
    }
    for (size_t i = 0; i < t->nrows; i++) {
        const struct top_row *r = &t->rows[i];
        /* a GPU's process is in its GPU's list; a parent on no GPU only here */
        json_t *o = json_pack("{s:o, s:I, s:i, s:b}", "gpu",
                              r->context ? json_null() : json_integer(r->gpu), "pid",
                              (json_int_t)r->proc.pid, "depth", (int)r->depth, "context",
                              r->context);
        if (o && r->context)
            json_object_set_new(o, "process", render_json_proc(&r->proc));
        json_array_append_new(rows, o);
    }
    json_object_set_new(doc, "top",
                        json_pack("{s:f, s:s, s:b, s:b, s:s, s:I, s:o}", "interval_s", t->interval,
                                  "sort", top_col_key(t->sort), "reverse", t->reverse, "tree",
                                  t->tree, "filter", t->filter_text, "processes",
                                  (json_int_t)t->total, "rows", rows));
    return doc;
}
