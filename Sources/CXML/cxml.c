#include "CXML.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <pthread.h>

#define DOC(d) ((xmlDocPtr)(d))
#define NODE(n) ((xmlNodePtr)(n))
#define ATTR(a) ((xmlAttrPtr)(a))

/// Every external entity, DTD or XInclude libxml2 would load goes through this loader:
/// it loads nothing.
static xmlParserInputPtr refuse_everything(const char *url, const char *id, xmlParserCtxtPtr context) {
    (void)url;
    (void)id;
    (void)context;
    return NULL;
}

static void quiet(void *context, const char *message, ...) {
    (void)context;
    (void)message;
}

static void start_once(void) {
    xmlInitParser();
    xmlSetExternalEntityLoader(refuse_everything);
}

static pthread_once_t started = PTHREAD_ONCE_INIT;

cxml_doc *cxml_parse(const void *data, size_t length) {
    pthread_once(&started, start_once);
    if (length > 0x7fffffff)
        return NULL;
    // The generic error handler is per thread in libxml2: set here, on the parsing thread.
    xmlSetGenericErrorFunc(NULL, quiet);
    xmlParserCtxtPtr context = xmlNewParserCtxt();
    if (!context)
        return NULL;
    // NONET: no network. Neither NOENT (entities are not substituted) nor DTDLOAD nor
    // XINCLUDE nor HUGE (libxml2's own depth and size limits hold).
    int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
    xmlDocPtr doc = xmlCtxtReadMemory(context, data, (int)length, NULL, NULL, options);
    if (doc && !context->wellFormed) {
        xmlFreeDoc(doc);
        doc = NULL;
    }
    xmlFreeParserCtxt(context);
    return (cxml_doc *)doc;
}

void cxml_free_doc(cxml_doc *doc) { xmlFreeDoc(DOC(doc)); }

int cxml_declares_entities(cxml_doc *doc) {
    xmlDtdPtr dtd = DOC(doc)->intSubset;
    if (!dtd)
        return 0;
    if (dtd->entities || dtd->pentities)
        return 1;
    for (xmlNodePtr n = dtd->children; n; n = n->next)
        if (n->type == XML_ENTITY_DECL)
            return 1;
    return 0;
}

int cxml_serialise(cxml_doc *doc, char **out, int *length) {
    xmlChar *text = NULL;
    xmlDocDumpMemoryEnc(DOC(doc), &text, length, "UTF-8");
    if (!text)
        return -1;
    *out = (char *)text;
    return 0;
}

void cxml_free(void *pointer) { xmlFree(pointer); }

cxml_node *cxml_root(cxml_doc *doc) { return (cxml_node *)xmlDocGetRootElement(DOC(doc)); }
cxml_node *cxml_doc_first_child(cxml_doc *doc) { return (cxml_node *)DOC(doc)->children; }
cxml_node *cxml_first_child(cxml_node *node) { return (cxml_node *)NODE(node)->children; }
cxml_node *cxml_next(cxml_node *node) { return (cxml_node *)NODE(node)->next; }
int cxml_type(cxml_node *node) { return (int)NODE(node)->type; }
const char *cxml_name(cxml_node *node) { return NODE(node)->name ? (const char *)NODE(node)->name : ""; }

const char *cxml_namespace(cxml_node *node) {
    xmlNsPtr ns = NODE(node)->ns;
    return ns && ns->href ? (const char *)ns->href : NULL;
}

void cxml_set_name(cxml_node *node, const char *name) { xmlNodeSetName(NODE(node), (const xmlChar *)name); }
char *cxml_text(cxml_node *node) { return (char *)xmlNodeGetContent(NODE(node)); }

void cxml_remove(cxml_node *node) {
    xmlUnlinkNode(NODE(node));
    xmlFreeNode(NODE(node));
}

cxml_attribute *cxml_first_attribute(cxml_node *node) {
    return NODE(node)->type == XML_ELEMENT_NODE ? (cxml_attribute *)NODE(node)->properties : NULL;
}

cxml_attribute *cxml_next_attribute(cxml_attribute *attribute) { return (cxml_attribute *)ATTR(attribute)->next; }
const char *cxml_attribute_name(cxml_attribute *attribute) { return (const char *)ATTR(attribute)->name; }

const char *cxml_attribute_namespace(cxml_attribute *attribute) {
    xmlNsPtr ns = ATTR(attribute)->ns;
    return ns && ns->href ? (const char *)ns->href : NULL;
}

const char *cxml_attribute_prefix(cxml_attribute *attribute) {
    xmlNsPtr ns = ATTR(attribute)->ns;
    return ns && ns->prefix ? (const char *)ns->prefix : NULL;
}

char *cxml_attribute_value(cxml_attribute *attribute) {
    return (char *)xmlNodeListGetString(ATTR(attribute)->doc, ATTR(attribute)->children, 1);
}

void cxml_remove_attribute(cxml_attribute *attribute) { xmlRemoveProp(ATTR(attribute)); }
char *cxml_get(cxml_node *node, const char *name) { return (char *)xmlGetNoNsProp(NODE(node), (const xmlChar *)name); }

void cxml_set(cxml_node *node, const char *name, const char *value) {
    xmlSetProp(NODE(node), (const xmlChar *)name, (const xmlChar *)value);
}
