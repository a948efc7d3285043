-- The newest stored calibration of dataset ?, encoder ?, seed ?.
SELECT * FROM dynamicqa_calibration WHERE dataset_id = ? AND encoder = ? AND seed = ?
ORDER BY calibration_id DESC LIMIT 1
