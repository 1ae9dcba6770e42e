// Package sa holds saquery: the subnet administrator's records, queried,
// selected and printed from the generated record types of pkg/mad.
package sa
