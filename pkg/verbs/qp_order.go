package verbs

import "fmt"

// DataInOrder is what ibv_query_qp_data_in_order says of a QP's data
// placement for one opcode: 0 when the receiver may see the data of a
// message land in any order, DataInOrderWholeMsg when all of it lands in
// order (so a poller may watch a message's last byte).
type DataInOrder uint32

// The answers of QP.QueryDataInOrder.
const (
	DataInOrderNone     DataInOrder = 0
	DataInOrderWholeMsg DataInOrder = 1 // IBV_QUERY_QP_DATA_IN_ORDER_WHOLE_MSG
)

// String names the answer.
func (d DataInOrder) String() string {
	switch d {
	case DataInOrderNone:
		return "not in order"
	case DataInOrderWholeMsg:
		return "whole message in order"
	}
	return fmt.Sprintf("data in order %#x", uint32(d))
}

// QueryDataInOrder asks whether the data of op's messages on the QP is
// written in order at the receiver (ibv_query_qp_data_in_order). A
// libibverbs older than rdma-core 39, which lacks the call, is an error
// wrapping EOPNOTSUPP; libibverbs itself answers DataInOrderNone for a
// provider that does not say.
func (qp *QP) QueryDataInOrder(op Opcode) (DataInOrder, error) {
	qp.use("QueryDataInOrder")
	d, err := drv.queryDataInOrder(qp.h, op)
	if err != nil {
		return 0, verbError("ibv_query_qp_data_in_order", fmt.Sprintf("%s (%s)", qp, op), err)
	}
	return d, nil
}
