// libxml2 behind the few calls the SVG sanitiser makes, with the parser locked down: no
// network, no external entity or DTD ever loaded (the loader refuses every URL), no
// error text on stderr. libxml2's own headers stay in the .c file (they pull in ICU,
// which would clash with Foundation's copy): Swift sees opaque handles only.
#ifndef CXML_H
#define CXML_H

#include <stddef.h>

typedef struct cxml_doc cxml_doc;
typedef struct cxml_node cxml_node;
typedef struct cxml_attribute cxml_attribute;

/// What a node is, as libxml2's xmlElementType numbers them.
enum {
    CXML_ELEMENT = 1,
    CXML_TEXT = 3,
    CXML_CDATA = 4,
    CXML_ENTITY_REFERENCE = 5,
    CXML_PROCESSING_INSTRUCTION = 7,
    CXML_COMMENT = 8,
    CXML_DTD = 14,
};

/// Parses a document from memory with the network off, no DTD loaded, no entity
/// substituted, and errors kept quiet; NULL when it is not well-formed XML. Free it
/// with cxml_free_doc.
cxml_doc *cxml_parse(const void *data, size_t length);
void cxml_free_doc(cxml_doc *doc);
/// Whether the document's internal DTD subset declares any entity.
int cxml_declares_entities(cxml_doc *doc);
/// The document serialised as UTF-8: free *out with cxml_free; -1 on failure.
int cxml_serialise(cxml_doc *doc, char **out, int *length);
void cxml_free(void *pointer);

cxml_node *cxml_root(cxml_doc *doc);
/// The document's own children: the prologue (DTD, comments, processing instructions) and the root.
cxml_node *cxml_doc_first_child(cxml_doc *doc);
cxml_node *cxml_first_child(cxml_node *node);
cxml_node *cxml_next(cxml_node *node);
int cxml_type(cxml_node *node);
/// The node's local name (owned by the node; "" when it has none).
const char *cxml_name(cxml_node *node);
/// The namespace URI of the node, or NULL.
const char *cxml_namespace(cxml_node *node);
void cxml_set_name(cxml_node *node, const char *name);
/// The text content of a node and its descendants: free with cxml_free.
char *cxml_text(cxml_node *node);
/// Unlinks a node (an element, a DTD, a comment, …) and frees it with its subtree.
void cxml_remove(cxml_node *node);

cxml_attribute *cxml_first_attribute(cxml_node *node);
cxml_attribute *cxml_next_attribute(cxml_attribute *attribute);
const char *cxml_attribute_name(cxml_attribute *attribute);
/// The namespace URI and prefix of an attribute, or NULL.
const char *cxml_attribute_namespace(cxml_attribute *attribute);
const char *cxml_attribute_prefix(cxml_attribute *attribute);
/// The text of an attribute: free with cxml_free.
char *cxml_attribute_value(cxml_attribute *attribute);
void cxml_remove_attribute(cxml_attribute *attribute);
/// The value of the attribute `name` without a namespace, or NULL: free with cxml_free.
char *cxml_get(cxml_node *node, const char *name);
/// Sets the attribute `name` (no namespace) to `value`, escaped when written out.
void cxml_set(cxml_node *node, const char *name, const char *value);

#endif
